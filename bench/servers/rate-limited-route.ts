// The bare route behind the rate-limiter block's `rateLimit()` (Express middleware or Fastify hook), on its memory, Redis or PostgreSQL store.
import type { RequestHandler } from "express";
import pg from "pg";
import { Redis } from "ioredis";
import { rateLimit } from "@/blocks/rate-limiter/adapters/express";
import { rateLimit as fastifyRateLimit } from "@/blocks/rate-limiter/adapters/fastify";
import { RateLimiter } from "@/blocks/rate-limiter/limiter";
import { MemoryRateLimitStore } from "@/blocks/rate-limiter/stores/memory-store";
import { PostgresRateLimitStore } from "@/blocks/rate-limiter/stores/postgres-store";
import { RedisRateLimitStore } from "@/blocks/rate-limiter/stores/redis-store";
import type { RateLimitStore } from "@/blocks/rate-limiter/types";
import type { Closable } from "./block-handler";
import type { ServerSpec } from "./spec";

/** Callers the requests rotate through: each decision reads and writes one of this many keys. */
const USERS = 1_000;

async function limiterStore(spec: ServerSpec): Promise<{ store: RateLimitStore } & Closable> {
  if (spec.backend === "memory") return { store: new MemoryRateLimitStore(), close: async () => {} };
  if (spec.backend === "redis") {
    const redis = new Redis(spec.redisUrl, { maxRetriesPerRequest: 1 });
    return {
      store: new RedisRateLimitStore(redis, { prefix: spec.redisPrefix }),
      close: async () => void redis.disconnect(),
    };
  }
  if (spec.backend === "postgres") {
    if (!spec.rateLimitTable) throw new Error("rate-limited on postgres needs a rateLimitTable.");
    const pool = new pg.Pool({ connectionString: spec.databaseUrl, max: spec.poolSize });
    return { store: new PostgresRateLimitStore(pool, { table: spec.rateLimitTable }), close: () => pool.end() };
  }
  throw new Error(`The rate limiter has no "${spec.backend}" store.`);
}

/** A quota nobody reaches: every request takes the full allowed path (one store decision, the headers). */
async function benchLimiter(spec: ServerSpec): Promise<{ limiter: RateLimiter; getUserId: () => string } & Closable> {
  const { store, close } = await limiterStore(spec);
  let caller = 0;
  return {
    limiter: new RateLimiter(store, { name: "bench", limit: 10_000_000, windowMs: 60_000 }),
    getUserId: () => `u_${caller++ % USERS}`,
    close,
  };
}

export async function rateLimitedRoute(spec: ServerSpec): Promise<{ handler: RequestHandler } & Closable> {
  const { limiter, getUserId, close } = await benchLimiter(spec);
  return { handler: rateLimit(limiter, { getUserId, headers: spec.limiterHeaders }), close };
}

export async function rateLimitedHook(
  spec: ServerSpec,
): Promise<{ hook: ReturnType<typeof fastifyRateLimit> } & Closable> {
  const { limiter, getUserId, close } = await benchLimiter(spec);
  return { hook: fastifyRateLimit(limiter, { getUserId, headers: spec.limiterHeaders }), close };
}
