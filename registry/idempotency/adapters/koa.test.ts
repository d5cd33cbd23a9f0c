// Route tests for the Koa adapter on a real app with @koa/router: copy them next to your own routes.
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import Router from "@koa/router";
import Koa, { type Middleware } from "koa";
import { afterEach, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "../handler";
import { MemoryStore } from "../testing/memory-store";
import { idempotency, idempotent } from "./koa";

type User = { id: string };

/** Your body parser goes here (@koa/bodyparser); this one reads JSON only. */
const readJson: Middleware = async (ctx, next) => {
  let text = "";
  for await (const chunk of ctx.req) text += String(chunk);
  (ctx.request as { body?: unknown }).body = text === "" ? undefined : JSON.parse(text);
  await next();
};

/** Your auth middleware goes here; this one trusts a header. */
const authenticate: Middleware = async (ctx, next) => {
  ctx.state.user = { id: ctx.get("x-user-id") } satisfies User;
  await next();
};

const servers: Array<{ close(): unknown }> = [];
afterEach(() => servers.splice(0).forEach((server) => server.close()));

async function paymentsApp() {
  const charges: number[] = [];
  let release: () => void = () => {};
  let charging: () => void = () => {};
  let hold: Promise<void> | undefined;
  const handler = new IdempotencyHandler(new MemoryStore());
  const router = new Router();
  router.post(
    "/payments",
    idempotency(handler, { getUserId: (ctx) => (ctx.state.user as User).id, requireKey: true }),
    async (ctx) => {
      const { amount } = (ctx.request as { body?: unknown }).body as { amount: number };
      charges.push(amount);
      charging();
      await hold;
      ctx.status = 201;
      ctx.body = { id: `pay_${charges.length}`, amount };
    },
  );
  const app = new Koa().use(readJson).use(authenticate).use(router.routes());
  const server = app.listen(0, "127.0.0.1");
  servers.push(server);
  await once(server, "listening");
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/payments`;
  return {
    charges,
    pay: (key: string | undefined, body: object = { amount: 100 }, user = "u_1") =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "x-user-id": user, ...(key ? { "idempotency-key": key } : {}) },
        body: JSON.stringify(body),
      }),
    /** Holds the next charge until `release()`; resolves once it is running, to send a duplicate meanwhile. */
    holdCharge(): Promise<void> {
      hold = new Promise<void>((resolve) => (release = resolve));
      return new Promise<void>((resolve) => (charging = resolve));
    },
    release: () => release(),
  };
}

describe("POST /payments with the idempotency() middleware", () => {
  it("replays a retry byte for byte, and charges once", async () => {
    const app = await paymentsApp();
    const key = randomUUID();
    const first = await app.pay(key);
    const retry = await app.pay(key);
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(await retry.text()).toBe(await first.text());
    expect(retry.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(app.charges).toEqual([100]);
  });

  it("answers the same key with another payload 409", async () => {
    const app = await paymentsApp();
    const key = randomUUID();
    await app.pay(key, { amount: 100 });
    const reused = await app.pay(key, { amount: 999 });
    expect(reused.status).toBe(409);
    expect(await reused.json()).toMatchObject({ error: { code: "KEY_REUSED_WITH_DIFFERENT_REQUEST" } });
    expect(app.charges).toEqual([100]);
  });

  it("answers a duplicate sent while the first runs 409 with Retry-After, and charges once", async () => {
    const app = await paymentsApp();
    const charging = app.holdCharge();
    const key = randomUUID();
    const first = app.pay(key);
    await charging;
    const duplicate = await app.pay(key);
    app.release();
    expect(duplicate.status).toBe(409);
    expect(duplicate.headers.get("retry-after")).toBe("1");
    expect((await first).status).toBe(201);
    expect(app.charges).toEqual([100]);
  });

  it("answers a request without a key 400", async () => {
    const app = await paymentsApp();
    const response = await app.pay(undefined);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: "IDEMPOTENCY_KEY_MISSING" } });
    expect(app.charges).toEqual([]);
  });

  it("keeps users apart: the same key from another user is another payment", async () => {
    const app = await paymentsApp();
    const key = randomUUID();
    await app.pay(key, { amount: 100 }, "u_1");
    expect((await app.pay(key, { amount: 100 }, "u_2")).status).toBe(201);
    expect(app.charges).toEqual([100, 100]);
  });
});

describe("idempotent() for routes that return { status, body }", () => {
  class CardDeclined extends Error {}

  it("fails the key on a permanent error, and frees it on any other", async () => {
    let attempts = 0;
    const router = new Router();
    router.post(
      "/payments",
      idempotent(new IdempotencyHandler(new MemoryStore()), {
        getUserId: (ctx) => (ctx.state.user as User).id,
        isPermanentError: (err) => err instanceof CardDeclined,
        run: (ctx) => {
          attempts++;
          const { amount } = (ctx.request as { body?: unknown }).body as { amount: number };
          if (amount > 500) throw new CardDeclined("card declined");
          if (attempts === 1) throw new Error("bank timeout");
          return { status: 201, body: { id: "pay_1", amount } };
        },
      }),
    );
    const app = new Koa().use(readJson).use(authenticate).use(router.routes());
    app.silent = true; // Koa would log the thrown errors this test provokes
    const server = app.listen(0, "127.0.0.1");
    servers.push(server);
    await once(server, "listening");
    const pay = (key: string, amount: number) =>
      fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/payments`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-user-id": "u_1", "idempotency-key": key },
        body: JSON.stringify({ amount }),
      });
    const [retried, declined] = [randomUUID(), randomUUID()];
    expect((await pay(retried, 100)).status).toBe(500);
    expect((await pay(retried, 100)).status).toBe(201);
    expect((await pay(declined, 900)).status).toBe(500);
    const again = await pay(declined, 900);
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: { code: "REQUEST_FAILED" } });
    expect(attempts).toBe(3);
  });
});
