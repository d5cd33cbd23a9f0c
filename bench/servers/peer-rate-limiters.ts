// The peers of the rate-limiter block's comparison rows, each on Redis with a quota nobody reaches:
// rate-limiter-flexible's RateLimiterRedis as Express middleware, @fastify/rate-limit on Fastify.
import type { RequestHandler } from "express";
import type { FastifyInstance } from "fastify";
import { Redis } from "ioredis";
import type { Closable } from "./block-handler";
import type { ServerSpec } from "./spec";

/** The same rotation as our rate-limited route: each decision reads and writes one of this many keys. */
const USERS = 1_000;
const POINTS = 10_000_000;

/** rate-limiter-flexible as its README's Express middleware: `consume(key)`, then next() or 429. */
export async function rateLimiterFlexibleRoute(spec: ServerSpec): Promise<{ handler: RequestHandler } & Closable> {
  const { RateLimiterRedis } = await import("rate-limiter-flexible");
  const redis = new Redis(spec.redisUrl, { maxRetriesPerRequest: 1 });
  const limiter = new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: `${spec.redisPrefix ?? "bench:"}rlf`,
    points: POINTS,
    duration: 60,
  });
  let caller = 0;
  const handler: RequestHandler = function rateLimiterFlexible(_req, res, next) {
    limiter.consume(`u_${caller++ % USERS}`).then(
      () => next(),
      () => void res.status(429).json({ error: { code: "RATE_LIMITED" } }),
    );
  };
  return { handler, close: async () => void redis.disconnect() };
}

/** @fastify/rate-limit registered on the app with its Redis store. */
export async function registerFastifyRateLimit(app: FastifyInstance, spec: ServerSpec): Promise<Closable["close"]> {
  const { default: fastifyRateLimit } = await import("@fastify/rate-limit");
  const redis = new Redis(spec.redisUrl, { maxRetriesPerRequest: 1 });
  let caller = 0;
  await app.register(fastifyRateLimit, {
    max: POINTS,
    timeWindow: 60_000,
    redis,
    nameSpace: `${spec.redisPrefix ?? "bench:"}frl-`,
    keyGenerator: () => `u_${caller++ % USERS}`,
  });
  return async () => void redis.disconnect();
}
