// The bare Express route behind the rate-limiter block's `rateLimit()` middleware, on its memory, Redis or PostgreSQL store.
import type { RequestHandler } from "express";
import pg from "pg";
import { Redis } from "ioredis";
import { rateLimit } from "@/blocks/rate-limiter/adapters/express";
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
    return { store: new RedisRateLimitStore(redis, { prefix: spec.redisPrefix }), close: async () => void redis.disconnect() };
  }
  if (spec.backend === "postgres") {
    if (!spec.rateLimitTable) throw new Error("rate-limited on postgres needs a rateLimitTable.");
    const pool = new pg.Pool({ connectionString: spec.databaseUrl, max: spec.poolSize });
    return { store: new PostgresRateLimitStore(pool, { table: spec.rateLimitTable }), close: () => pool.end() };
  }
  throw new Error(`The rate limiter has no "${spec.backend}" store.`);
}

/** A quota nobody reaches: every request takes the full allowed path (one store decision, the headers). */
export async function rateLimitedRoute(spec: ServerSpec): Promise<{ handler: RequestHandler } & Closable> {
  const { store, close } = await limiterStore(spec);
  const limiter = new RateLimiter(store, { name: "bench", limit: 10_000_000, windowMs: 60_000 });
  let caller = 0;
  return { handler: rateLimit(limiter, { getUserId: () => `u_${caller++ % USERS}` }), close };
}
