// Route tests for the Koa adapter on a real app with @koa/router: copy them next to your own routes.
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import Router from "@koa/router";
import Koa from "koa";
import { afterAll, beforeAll, expect, it } from "vitest";
import { RateLimiter } from "../limiter";
import { MemoryRateLimitStore } from "../stores/memory-store";
import { rateLimit } from "./koa";

// Use your own store (RedisRateLimitStore, PostgresRateLimitStore) to test the setup you deploy.
const store = new MemoryRateLimitStore();
const app = new Koa();
// Your auth middleware goes here; this one trusts a header.
app.use(async (ctx, next) => {
  ctx.state.user = { id: ctx.get("x-user") || "anonymous" };
  await next();
});
const router = new Router();
router.post(
  "/payments/:id",
  rateLimit(new RateLimiter(store, { name: "payments", limit: 2, windowMs: 60_000 })),
  (ctx) => {
    ctx.status = 201;
    ctx.body = { id: ctx.params.id };
  },
);
router.post(
  "/orders",
  rateLimit(new RateLimiter(store, { name: "lock", limit: 2, windowMs: 60_000 }), { keyBy: "idempotencyKey" }),
  (ctx) => {
    ctx.status = 201;
    ctx.body = { id: "ord_1" };
  },
);
app.use(router.routes());

let server: ReturnType<typeof app.listen>;
let base: string;
beforeAll(async () => {
  server = app.listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const post = (path: string, headers: Record<string, string>) => fetch(`${base}${path}`, { method: "POST", headers });

it("lets requests through with the RateLimit headers, then answers 429 RATE_LIMITED with Retry-After", async () => {
  const first = await post("/payments/p_1", { "x-user": "u_1" });
  expect(first.status).toBe(201);
  expect(first.headers.get("ratelimit-policy")).toBe('"payments";q=2;w=60');
  expect(first.headers.get("ratelimit")).toBe('"payments";r=1;t=30');
  await post("/payments/p_2", { "x-user": "u_1" });

  // Another id, the same route template: the same quota.
  const refused = await post("/payments/p_3", { "x-user": "u_1" });
  expect(refused.status).toBe(429);
  expect(refused.headers.get("retry-after")).toBe("30");
  expect(refused.headers.get("ratelimit")).toBe('"payments";r=0;t=30');
  expect(await refused.json()).toEqual({ error: { code: "RATE_LIMITED", message: "Too many requests: retry later." } });
});

it("gives every user their own quota", async () => {
  expect((await post("/payments/p_1", { "x-user": "u_2" })).status).toBe(201);
});

it("keyBy idempotencyKey: caps one key's retries, leaves other keys and keyless requests alone", async () => {
  const retry = () => post("/orders", { "x-user": "u_1", "idempotency-key": "k-1" });
  expect([(await retry()).status, (await retry()).status, (await retry()).status]).toEqual([201, 201, 429]);
  expect((await post("/orders", { "x-user": "u_1", "idempotency-key": "k-2" })).status).toBe(201);
  expect((await post("/orders", { "x-user": "u_1" })).status).toBe(201);
});
