// The Standard Webhooks receiver against deliveries signed by the `standardwebhooks` package, on every route it offers.
import type { AddressInfo } from "node:net";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { Webhook } from "standardwebhooks";
import { afterAll, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import type { InboxMessage } from "@/blocks/idempotency/consume";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import { webhookHandler, type ProcessWebhook, type WebhookOptions } from "@/blocks/idempotency/consumers/webhook";
import { webhookRoute as expressRoute } from "@/blocks/idempotency/consumers/webhook-express";
import { webhookRoutes as fastifyRoutes } from "@/blocks/idempotency/consumers/webhook-fastify";
import { webhookRoute as honoRoute } from "@/blocks/idempotency/consumers/webhook-hono";
import { signingKeys } from "@/blocks/idempotency/consumers/standard-webhooks";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const OLD_SECRET = "whsec_c2VjcmV0LW9mLWxhc3QteWVhci0xMjM0NTY3OA==";
const OTHER_SECRET = "whsec_bm90LXRoZS1zZW5kZXJzLXNlY3JldC0xMjM0NTY=";

type Delivery = { headers: Record<string, string>; body: string };
type Answer = { status: number; body: unknown; retryAfter?: string | null };
type Deliver = (delivery: Delivery) => Promise<Answer>;

class Declined extends Error {}

/** One receiver under test: its state (runs, dead) and how a delivery reaches it. */
type Receiver = { deliver: Deliver; runs: unknown[]; dead: InboxMessage[]; close(): Promise<void> };
type Mount = (
  options: WebhookOptions,
  process: ProcessWebhook<unknown>,
) => Promise<{ deliver: Deliver; close(): Promise<void> }>;

const handler = () => new IdempotencyHandler(new MemoryStore());

const mounts: Record<string, Mount> = {
  fetch: async (options, process) => {
    const handle = webhookHandler(handler(), options, process);
    const deliver: Deliver = async ({ headers, body }) => {
      const response = await handle(new Request("http://localhost/webhooks", { method: "POST", headers, body }));
      return { status: response.status, body: await response.json(), retryAfter: response.headers.get("retry-after") };
    };
    return { deliver, close: async () => {} };
  },
  express: async (options, process) => {
    const app = express();
    app.post("/webhooks", express.raw({ type: "*/*" }), expressRoute(handler(), options, process));
    const server = app.listen(0);
    await new Promise((resolve) => server.once("listening", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
    const deliver: Deliver = async ({ headers, body }) => {
      const response = await fetch(url, { method: "POST", headers, body });
      return { status: response.status, body: await response.json(), retryAfter: response.headers.get("retry-after") };
    };
    return { deliver, close: () => new Promise((resolve) => server.close(() => resolve())) };
  },
  fastify: async (options, process) => {
    const app = Fastify();
    await app.register(fastifyRoutes("/webhooks", handler(), options, process));
    const deliver: Deliver = async ({ headers, body }) => {
      const response = await app.inject({ method: "POST", url: "/webhooks", headers, payload: body });
      return {
        status: response.statusCode,
        body: response.json(),
        retryAfter: (response.headers["retry-after"] as string | undefined) ?? null,
      };
    };
    return { deliver, close: () => app.close() };
  },
  hono: async (options, process) => {
    const app = new Hono();
    app.post("/webhooks", honoRoute(handler(), options, process));
    const deliver: Deliver = async ({ headers, body }) => {
      const response = await app.request("/webhooks", { method: "POST", headers, body });
      return { status: response.status, body: await response.json(), retryAfter: response.headers.get("retry-after") };
    };
    return { deliver, close: async () => {} };
  },
};

function signed(
  id: string,
  event: unknown,
  { secret = SECRET, at = new Date(), body = JSON.stringify(event) } = {},
): Delivery {
  const signature = new Webhook(secret).sign(id, at, body);
  return {
    headers: {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": signature,
    },
    body,
  };
}

const event = { type: "payment.succeeded", data: { id: "pay_1", amount: 1200 } };

describe.each(Object.keys(mounts))("Standard Webhooks receiver (%s)", (name) => {
  const open: Receiver[] = [];
  afterAll(async () => {
    for (const receiver of open) await receiver.close();
  });
  async function receiver(process?: ProcessWebhook<unknown>, secrets: string[] = [SECRET]): Promise<Receiver> {
    const runs: unknown[] = [];
    const dead: InboxMessage[] = [];
    const mounted = await mounts[name]!(
      {
        source: "acme",
        secrets,
        onDead: (message) => void dead.push(message),
        isPermanentError: (err) => err instanceof Declined,
      },
      process ?? ((e) => (runs.push(e), { ok: true })),
    );
    const made = { ...mounted, runs, dead };
    open.push(made);
    return made;
  }

  it("runs a signed delivery once; the sender's retry (same id) answers 2xx and runs nothing", async () => {
    const r = await receiver();
    const first = await r.deliver(signed("msg_1", event));
    const retry = await r.deliver(signed("msg_1", event, { at: new Date(Date.now() - 60_000) }));
    expect([first, retry].map((a) => [a.status, a.body])).toEqual([
      [200, { outcome: "processed" }],
      [200, { outcome: "duplicate" }],
    ]);
    expect(r.runs).toEqual([event]);
  });

  it("accepts a delivery signed with the old secret during a rotation, and several signatures in one header", async () => {
    const r = await receiver(undefined, [SECRET, OLD_SECRET]);
    expect((await r.deliver(signed("msg_old", event, { secret: OLD_SECRET }))).status).toBe(200);
    const body = JSON.stringify(event);
    const at = new Date();
    const both = signed("msg_both", event, { secret: OTHER_SECRET, at, body });
    both.headers["webhook-signature"] =
      `${both.headers["webhook-signature"]} v1a,ignored ${new Webhook(SECRET).sign("msg_both", at, body)}`;
    expect((await r.deliver(both)).status).toBe(200);
    expect(r.runs).toHaveLength(2);
  });

  it.each([
    ["a tampered body", (d: Delivery) => ({ ...d, body: d.body.replace("1200", "9999") })],
    ["another secret", () => signed("msg_x", event, { secret: OTHER_SECRET })],
    ["a stale timestamp (6 minutes old)", () => signed("msg_x", event, { at: new Date(Date.now() - 360_000) })],
    ["a future timestamp (6 minutes ahead)", () => signed("msg_x", event, { at: new Date(Date.now() + 360_000) })],
    ["no webhook-signature", (d: Delivery) => ({ ...d, headers: { ...d.headers, "webhook-signature": "" } })],
    [
      "no webhook-id",
      (d: Delivery) => ({
        ...d,
        headers: Object.fromEntries(Object.entries(d.headers).filter(([k]) => k !== "webhook-id")),
      }),
    ],
    [
      "no webhook-timestamp",
      (d: Delivery) => ({
        ...d,
        headers: Object.fromEntries(Object.entries(d.headers).filter(([k]) => k !== "webhook-timestamp")),
      }),
    ],
    ["a changed id", (d: Delivery) => ({ ...d, headers: { ...d.headers, "webhook-id": "msg_other" } })],
    [
      "a v2 signature only",
      (d: Delivery) => ({
        ...d,
        headers: { ...d.headers, "webhook-signature": d.headers["webhook-signature"]!.replace("v1,", "v2,") },
      }),
    ],
  ])("refuses %s with 401 and runs nothing", async (_, tamper) => {
    const r = await receiver();
    const answer = await r.deliver(tamper(signed("msg_x", event)));
    expect([answer.status, (answer.body as { error: { code: string } }).error.code, r.runs]).toEqual([
      401,
      "WEBHOOK_SIGNATURE_INVALID",
      [],
    ]);
  });

  it("a signed delivery that is not JSON is 400; an id sent again with another body is 409, runs nothing", async () => {
    const r = await receiver();
    expect((await r.deliver(signed("msg_bad", null, { body: "not json" }))).status).toBe(400);
    await r.deliver(signed("msg_1", event));
    const conflict = await r.deliver(signed("msg_1", { ...event, data: { id: "pay_1", amount: 1 } }));
    expect([conflict.status, (conflict.body as { error: { code: string } }).error.code, r.runs]).toEqual([
      409,
      "KEY_REUSED_WITH_DIFFERENT_REQUEST",
      [event],
    ]);
  });

  it("a transient failure is 500 without internals (the sender retries); the retry runs and answers 200", async () => {
    let calls = 0;
    const r = await receiver(() => {
      if (++calls === 1) throw new Error("connect ECONNREFUSED 10.0.0.7:5432");
      return "ok";
    });
    const first = await r.deliver(signed("msg_1", event));
    expect([first.status, JSON.stringify(first.body).includes("ECONNREFUSED")]).toEqual([500, false]);
    expect((await r.deliver(signed("msg_1", event))).status).toBe(200);
  });

  it("a dead delivery answers 200 after onDead (retrying cannot help), and its retries 200 without onDead", async () => {
    const r = await receiver(() => Promise.reject(new Declined("unknown account")));
    const answers = [await r.deliver(signed("msg_1", event)), await r.deliver(signed("msg_1", event))];
    expect(answers.map((a) => [a.status, a.body])).toEqual([
      [200, { outcome: "dead" }],
      [200, { outcome: "dead" }],
    ]);
    expect(r.dead.map((m) => [m.source, m.messageId, m.payload])).toEqual([["acme", "msg_1", event]]);
  });

  it("a delivery still running answers 409 with Retry-After", async () => {
    let release!: () => void;
    const r = await receiver(() => new Promise<string>((resolve) => (release = () => resolve("ok"))));
    const first = r.deliver(signed("msg_1", event));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = await r.deliver(signed("msg_1", event));
    release();
    expect([second.status, second.retryAfter, (await first).status]).toEqual([409, "1", 200]);
  });
});

describe("signing secrets", () => {
  it.each([[[]], [["whsec_"]], [["not base64!"]]])("refuses %j when the receiver is made", (secrets) => {
    expect(() => signingKeys(secrets)).toThrow(TypeError);
  });
});
