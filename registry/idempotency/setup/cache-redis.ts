// The Redis cache in front of the store: when Redis fails, requests go on from the store (the block logs and counts it).
import { Redis } from "ioredis";
import { RedisCache } from "../caches/redis-cache";
import type { IdempotencyCache } from "../types";

/** The cache's client, or `null` to run without the cache. */
export type CacheClient = Redis | null;

/** The cache's Redis client (REDIS_URL); pass the app's own as `createIdempotency({ redis })` to share it. */
export function connectRedis(url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379"): Redis {
  return new Redis(url, { maxRetriesPerRequest: 1 });
}

export function connectCache(): CacheClient {
  return connectRedis();
}

export function openCache(client: CacheClient): { cache: IdempotencyCache | undefined; end(): Promise<void> } {
  if (!client) return { cache: undefined, end: () => Promise.resolve() };
  return {
    cache: new RedisCache(client),
    end: async () => {
      await client.quit();
    },
  };
}
