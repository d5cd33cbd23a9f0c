import { Hono } from "hono";
import { expect, it } from "vitest";
import { RateLimiter } from "../limiter";
import { MemoryRateLimitStore } from "../stores/memory-store";
import { rateLimit } from "./hono";

// Use your own store (RedisRateLimitStore, PostgresRateLimitStore) to test the setup you deploy.
function buildApp() {
  const store = new MemoryRateLimitStore();
  const app = new Hono();
  const getUserId = (c: { req: { header(name: string): string | undefined } }) => c.req.header("x-user");
  app.post(
    "/payments",
    rateLimit(new RateLimiter(store, { name: "payments", limit: 2, windowMs: 60_000 }), { getUserId }),
    (c) => {
      return c.json({ id: "pay_1" }, 201);
    },
  );
  const lock = rateLimit(new RateLimiter(store, { name: "lock", limit: 2, windowMs: 60_000 }), {
    getUserId,
    keyBy: "idempotencyKey",
  });
  app.post("/orders", lock, (c) => c.json({ id: "ord_1" }, 201));
  return app;
}

it("lets requests through with the RateLimit headers, then answers 429 RATE_LIMITED with Retry-After", async () => {
  const app = buildApp();
  const pay = (user: string) => app.request("/payments", { method: "POST", headers: { "x-user": user } });
  const first = await pay("u_1");
  expect(first.status).toBe(201);
  expect(first.headers.get("ratelimit-policy")).toBe('"payments";q=2;w=60');
  expect(first.headers.get("ratelimit")).toBe('"payments";r=1;t=30');
  await pay("u_1");

  const refused = await pay("u_1");
  expect(refused.status).toBe(429);
  expect(refused.headers.get("retry-after")).toBe("30");
  expect(await refused.json()).toEqual({ error: { code: "RATE_LIMITED", message: "Too many requests: retry later." } });
  expect((await pay("u_2")).status).toBe(201);
});

it("keyBy idempotencyKey: caps one key's retries, leaves other keys and keyless requests alone", async () => {
  const app = buildApp();
  const order = (headers: Record<string, string>) =>
    app.request("/orders", { method: "POST", headers: { "x-user": "u_1", ...headers } });
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) statuses.push((await order({ "idempotency-key": "k-1" })).status);
  expect(statuses).toEqual([201, 201, 429]);
  expect((await order({ "idempotency-key": "k-2" })).status).toBe(201);
  expect((await order({})).status).toBe(201);
});

it("adds the headers to a Response the route builds itself, and to onError's answer", async () => {
  const app = new Hono();
  app.use(
    rateLimit(new RateLimiter(new MemoryRateLimitStore(), { limit: 5, windowMs: 60_000 }), { getUserId: () => "u_1" }),
  );
  app.get("/raw", () => new Response("raw"));
  app.get("/fails", () => {
    throw new Error("boom");
  });
  app.onError((_err, c) => c.json({ error: "internal" }, 500));
  expect((await app.request("/raw")).headers.get("ratelimit")).toBe('"default";r=4;t=12');
  expect((await app.request("/fails")).headers.get("ratelimit")).toBe('"default";r=4;t=12');
});
