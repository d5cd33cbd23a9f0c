import Fastify from "fastify";
import { expect, it } from "vitest";
import { RateLimiter } from "../limiter";
import { MemoryRateLimitStore } from "../stores/memory-store";
import { rateLimit } from "./fastify";

// Use your own store (RedisRateLimitStore, PostgresRateLimitStore) to test the setup you deploy.
function buildApp() {
  const store = new MemoryRateLimitStore();
  const app = Fastify();
  app.addHook("onRequest", (request, _reply, done) => {
    (request as { user?: { id: string } }).user = { id: String(request.headers["x-user"] ?? "anonymous") };
    done();
  });
  app.post(
    "/payments",
    { onRequest: rateLimit(new RateLimiter(store, { name: "payments", limit: 2, windowMs: 60_000 })) },
    async (_request, reply) => {
      return reply.code(201).send({ id: "pay_1" });
    },
  );
  const lock = rateLimit(new RateLimiter(store, { name: "lock", limit: 2, windowMs: 60_000 }), {
    keyBy: "idempotencyKey",
  });
  app.post("/orders", { onRequest: lock }, async (_request, reply) => reply.code(201).send({ id: "ord_1" }));
  return app;
}

it("lets requests through with the RateLimit headers, then answers 429 RATE_LIMITED with Retry-After", async () => {
  const app = buildApp();
  const pay = () => app.inject({ method: "POST", url: "/payments", headers: { "x-user": "u_1" } });
  const first = await pay();
  expect(first.statusCode).toBe(201);
  expect(first.headers["ratelimit-policy"]).toBe('"payments";q=2;w=60');
  expect(first.headers["ratelimit"]).toBe('"payments";r=1;t=30');
  await pay();

  const refused = await pay();
  expect(refused.statusCode).toBe(429);
  expect(refused.headers["retry-after"]).toBe("30");
  expect(refused.json()).toEqual({ error: { code: "RATE_LIMITED", message: "Too many requests: retry later." } });
  expect((await app.inject({ method: "POST", url: "/payments", headers: { "x-user": "u_2" } })).statusCode).toBe(201);
});

it("keyBy idempotencyKey: caps one key's retries, leaves other keys and keyless requests alone", async () => {
  const app = buildApp();
  const order = (headers: Record<string, string>) =>
    app.inject({ method: "POST", url: "/orders", headers: { "x-user": "u_1", ...headers } });
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) statuses.push((await order({ "idempotency-key": "k-1" })).statusCode);
  expect(statuses).toEqual([201, 201, 429]);
  expect((await order({ "idempotency-key": "k-2" })).statusCode).toBe(201);
  expect((await order({})).statusCode).toBe(201);
});
