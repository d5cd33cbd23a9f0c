// Route tests for the Express adapter: a small payments app, checked against the production checklist in both styles.
import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import express, { type ErrorRequestHandler, type Request } from "express";
import { afterEach, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "../handler";
import { MemoryStore } from "../testing/memory-store";
import type { IdempotencyStore } from "../types";
import { idempotency, idempotent } from "./express";

/** Thrown by the card processor for a request that can never succeed: the key is failed, not retried. */
class CardDeclinedError extends Error {}

type Charge = (amount: number) => Promise<{ id: string; amount: number }>;

/** The tests' own user: whoever the `x-user-id` header names. Your app would read its session or token here. */
const userId = (req: Request) => req.get("x-user-id") ?? "anonymous";

const amountOf = (req: Request) => Number((req.body as { amount?: unknown }).amount);

/** Two routes over one `charge`: POST /payments in wrapper style, POST /orders in capture style. */
function paymentsApp(handler: IdempotencyHandler, charge: Charge) {
  const app = express();
  app.use(express.json());
  app.post(
    "/payments",
    idempotent(handler, {
      getUserId: userId,
      requireKey: true,
      isPermanentError: (err) => err instanceof CardDeclinedError,
      run: async (req) => ({ status: 201, body: await charge(amountOf(req)) }),
    }),
  );
  app.post("/orders", idempotency(handler, { getUserId: userId, requireKey: true }), async (req, res) => {
    try {
      res.status(201).json(await charge(amountOf(req)));
    } catch (err) {
      // Capture style records what the route sends: a 4xx fails the key, a 5xx frees it for a retry.
      res.status(err instanceof CardDeclinedError ? 402 : 503).json({ error: String(err) });
    }
  });
  const errors: ErrorRequestHandler = (err, _req, res, next) => {
    // Express's rule for error handlers: a response already under way is Express's to end.
    if (res.headersSent) return next(err);
    res.status(err instanceof CardDeclinedError ? 402 : 503).json({ error: String(err) });
  };
  app.use(errors);
  return app;
}

/** A charge function that counts its calls; `behave` decides what call number n does. */
function cardProcessor(behave: (call: number) => Promise<void> | void = () => {}) {
  const processor: { calls: number; charge: Charge } = {
    calls: 0,
    charge: async (amount) => {
      const call = ++processor.calls;
      await behave(call);
      return { id: `pay_${call}`, amount };
    },
  };
  return processor;
}

const servers: Server[] = [];
afterEach(() => Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve)))));

/** Serves the app on a free port and returns a `post` that sends one JSON request to it. */
async function serve(app: express.Express) {
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, () => resolve(listening));
  });
  servers.push(server);
  const { port } = server.address() as AddressInfo;
  return async function post(path: string, options: { key?: string; user?: string; body?: unknown } = {}) {
    const headers: Record<string, string> = { "content-type": "application/json", "x-user-id": options.user ?? "u_1" };
    if (options.key !== undefined) headers["idempotency-key"] = options.key;
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: "POST",
      headers,
      body: JSON.stringify(options.body ?? { amount: 100 }),
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
}

const codeOf = (text: string): unknown => (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;

describe.each(["/payments", "/orders"])("POST %s", (path) => {
  it("replays a retry byte for byte, and charges once", async () => {
    const card = cardProcessor();
    const post = await serve(paymentsApp(new IdempotencyHandler(new MemoryStore()), card.charge));
    const key = randomUUID();
    const first = await post(path, { key });
    const retry = await post(path, { key });
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.text).toBe(first.text);
    expect(retry.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(card.calls).toBe(1);
  });

  it("answers the same key with another payload 409 KEY_REUSED_WITH_DIFFERENT_REQUEST", async () => {
    const card = cardProcessor();
    const post = await serve(paymentsApp(new IdempotencyHandler(new MemoryStore()), card.charge));
    const key = randomUUID();
    await post(path, { key, body: { amount: 100 } });
    const reused = await post(path, { key, body: { amount: 999 } });
    expect(reused.status).toBe(409);
    expect(codeOf(reused.text)).toBe("KEY_REUSED_WITH_DIFFERENT_REQUEST");
    expect(card.calls).toBe(1);
  });

  it("answers a concurrent duplicate 409 REQUEST_IN_PROGRESS, and charges once", async () => {
    let finish!: () => void;
    const charging = new Promise<void>((resolve) => (finish = resolve));
    const card = cardProcessor(() => charging);
    const post = await serve(paymentsApp(new IdempotencyHandler(new MemoryStore()), card.charge));
    const key = randomUUID();
    const first = post(path, { key });
    await expect.poll(() => card.calls).toBe(1);
    const duplicate = await post(path, { key });
    finish();
    expect(duplicate.status).toBe(409);
    expect(codeOf(duplicate.text)).toBe("REQUEST_IN_PROGRESS");
    expect(duplicate.headers.get("retry-after")).toBe("1");
    expect((await first).status).toBe(201);
    expect(card.calls).toBe(1);
  });

  it("fails the key on a permanent error: the retry gets 409 REQUEST_FAILED and nothing is charged again", async () => {
    const card = cardProcessor(() => {
      throw new CardDeclinedError("card declined");
    });
    const post = await serve(paymentsApp(new IdempotencyHandler(new MemoryStore()), card.charge));
    const key = randomUUID();
    expect((await post(path, { key })).status).toBe(402);
    const retry = await post(path, { key });
    expect(retry.status).toBe(409);
    expect(codeOf(retry.text)).toBe("REQUEST_FAILED");
    expect(card.calls).toBe(1);
  });

  it("frees the key on a transient error: the retry charges", async () => {
    const card = cardProcessor((call) => {
      if (call === 1) throw new Error("bank timeout");
    });
    const post = await serve(paymentsApp(new IdempotencyHandler(new MemoryStore()), card.charge));
    const key = randomUUID();
    expect((await post(path, { key })).status).toBe(503);
    const retry = await post(path, { key });
    expect(retry.status).toBe(201);
    expect(JSON.parse(retry.text)).toEqual({ id: "pay_2", amount: 100 });
  });

  it("answers a request without Idempotency-Key 400 IDEMPOTENCY_KEY_MISSING", async () => {
    const card = cardProcessor();
    const post = await serve(paymentsApp(new IdempotencyHandler(new MemoryStore()), card.charge));
    const missing = await post(path);
    expect(missing.status).toBe(400);
    expect(codeOf(missing.text)).toBe("IDEMPOTENCY_KEY_MISSING");
    expect(card.calls).toBe(0);
  });

  it("keeps users apart: the same key from two users is two payments", async () => {
    const card = cardProcessor();
    const post = await serve(paymentsApp(new IdempotencyHandler(new MemoryStore()), card.charge));
    const key = randomUUID();
    const alice = await post(path, { key, user: "alice" });
    const bob = await post(path, { key, user: "bob" });
    expect(JSON.parse(alice.text)).toMatchObject({ id: "pay_1" });
    expect(JSON.parse(bob.text)).toMatchObject({ id: "pay_2" });
  });

  it("answers 503 STORE_UNAVAILABLE when the store is down, without charging", async () => {
    const down = new MemoryStore();
    const store: IdempotencyStore = Object.assign(down, {
      create: () => Promise.reject(new Error("connection refused")),
    });
    const card = cardProcessor();
    const post = await serve(paymentsApp(new IdempotencyHandler(store), card.charge));
    const answer = await post(path, { key: randomUUID() });
    expect(answer.status).toBe(503);
    expect(codeOf(answer.text)).toBe("STORE_UNAVAILABLE");
    expect(card.calls).toBe(0);
  });
});

describe("a route with two recovery points (ctx.step)", () => {
  it("charges once across a retry: the retry after the mailer failed replays the charge and sends the receipt", async () => {
    const card = cardProcessor();
    const chargeKeys: string[] = [];
    let mailerDown = true;
    const app = express();
    app.use(express.json());
    app.post(
      "/checkout",
      idempotent(new IdempotencyHandler(new MemoryStore()), {
        getUserId: userId,
        requireKey: true,
        run: async (req, { step }) => {
          // Pass `stepKey` on as the processor's idempotency key: a crash mid-call then charges once too.
          const payment = await step("charge", (stepKey) => (chargeKeys.push(stepKey), card.charge(amountOf(req))));
          await step("receipt", () => {
            if (mailerDown) throw new Error("mailer unavailable");
          });
          return { status: 201, body: payment };
        },
      }),
    );
    app.use(((err, _req, res, next) =>
      res.headersSent ? next(err) : void res.status(503).json({ error: "try again" })) as ErrorRequestHandler);
    const post = await serve(app);
    const key = randomUUID();
    expect((await post("/checkout", { key })).status).toBe(503);
    mailerDown = false;
    const retry = await post("/checkout", { key });
    expect(retry.status).toBe(201);
    expect(JSON.parse(retry.text)).toEqual({ id: "pay_1", amount: 100 });
    expect(card.calls).toBe(1);
    expect(chargeKeys).toHaveLength(1);
  });
});
