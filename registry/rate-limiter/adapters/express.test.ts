import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, expect, it } from "vitest";
import { RateLimiter } from "../limiter";
import { MemoryRateLimitStore } from "../stores/memory-store";
import { rateLimit } from "./express";

// Use your own store (RedisRateLimitStore, PostgresRateLimitStore) to test the setup you deploy.
const store = new MemoryRateLimitStore();
const app = express();
app.use((req, _res, next) => {
  (req as { user?: { id: string } }).user = { id: req.get("x-user") ?? "anonymous" };
  next();
});
app.post(
  "/payments",
  rateLimit(new RateLimiter(store, { name: "payments", limit: 2, windowMs: 60_000 })),
  (_req, res) => {
    res.status(201).json({ id: "pay_1" });
  },
);
app.post(
  "/orders",
  rateLimit(new RateLimiter(store, { name: "lock", limit: 2, windowMs: 60_000 }), { keyBy: "idempotencyKey" }),
  (_req, res) => {
    res.status(201).json({ id: "ord_1" });
  },
);
// Anonymous callers behind one proxy (your load balancer) that appends to X-Forwarded-For.
app.post(
  "/quotes",
  rateLimit(new RateLimiter(store, { name: "quotes", limit: 2, windowMs: 60_000 }), {
    getUserId: () => undefined,
    trustProxy: 1,
  }),
  (_req, res) => {
    res.status(201).json({ id: "quote_1" });
  },
);

let server: ReturnType<typeof app.listen>;
let base: string;
beforeAll(async () => {
  server = app.listen(0);
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const post = (path: string, headers: Record<string, string>) => fetch(`${base}${path}`, { method: "POST", headers });

it("lets requests through with the RateLimit headers, then answers 429 RATE_LIMITED with Retry-After", async () => {
  const first = await post("/payments", { "x-user": "u_1" });
  expect(first.status).toBe(201);
  expect(first.headers.get("ratelimit-policy")).toBe('"payments";q=2;w=60');
  expect(first.headers.get("ratelimit")).toBe('"payments";r=1;t=30');
  await post("/payments", { "x-user": "u_1" });

  const refused = await post("/payments", { "x-user": "u_1" });
  expect(refused.status).toBe(429);
  expect(refused.headers.get("retry-after")).toBe("30");
  expect(refused.headers.get("ratelimit")).toBe('"payments";r=0;t=30');
  expect(await refused.json()).toEqual({ error: { code: "RATE_LIMITED", message: "Too many requests: retry later." } });
});

it("gives every user their own quota", async () => {
  expect((await post("/payments", { "x-user": "u_2" })).status).toBe(201);
});

it("keyBy idempotencyKey: caps one key's retries, leaves other keys and keyless requests alone", async () => {
  const retry = () => post("/orders", { "x-user": "u_1", "idempotency-key": "k-1" });
  expect([(await retry()).status, (await retry()).status, (await retry()).status]).toEqual([201, 201, 429]);
  expect((await post("/orders", { "x-user": "u_1", "idempotency-key": "k-2" })).status).toBe(201);
  expect((await post("/orders", { "x-user": "u_1" })).status).toBe(201);
});

it("trustProxy 1: the caller is the address your proxy appended; a forged leftmost entry buys nothing", async () => {
  const quote = (forwardedFor: string) => post("/quotes", { "x-forwarded-for": forwardedFor });
  const statuses: number[] = [];
  for (const forged of ["1.1.1.1", "2.2.2.2", "3.3.3.3"]) statuses.push((await quote(`${forged}, 203.0.113.7`)).status);
  expect(statuses).toEqual([201, 201, 429]);
  expect((await quote("203.0.113.8")).status).toBe(201);
});
