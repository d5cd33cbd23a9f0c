// RedisCache: completed records in Redis, so replays skip the store. Any failure is a miss upstream.
import { createHash } from "node:crypto";
import type { CacheScope, CachedRecord, IdempotencyCache } from "../types";

/** What the cache needs of a Redis client; an ioredis instance fits. */
export type RedisLike = {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, mode: "PX", ttlMs: number): Promise<unknown>;
};

export type RedisCacheOptions = {
  /** @default "idempotency:" */
  prefix?: string | undefined;
};

/**
 * Holds only completed records (SUCCESS or FAILED), each for no longer than its store record lives;
 * the handler decides what is cached and swallows, logs and counts every error thrown here. Keys
 * carry the store's table, so handlers on different tables can share one Redis.
 *
 * @example
 * const cache = new RedisCache(new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: 1 }));
 */
export class RedisCache implements IdempotencyCache {
  private readonly prefix: string;

  private readonly redis: RedisLike;

  constructor(redis: RedisLike, options: RedisCacheOptions = {}) {
    this.redis = redis;
    this.prefix = options.prefix ?? "idempotency:";
  }

  /** The parsed value, unchecked: the handler checks every cached value before it uses one. */
  async get(scope: CacheScope): Promise<unknown> {
    const value = await this.redis.get(this.keyOf(scope));
    return value === null ? undefined : (JSON.parse(value) as unknown);
  }

  async set(scope: CacheScope, record: CachedRecord, ttlMs: number): Promise<void> {
    const ms = Math.floor(ttlMs);
    if (ms <= 0) return;
    await this.redis.set(this.keyOf(scope), JSON.stringify(record), "PX", ms);
  }

  /** A hash keeps keys short and free of delimiter ambiguity, whatever the scope contains. */
  private keyOf({ namespace, operation, userId, key }: CacheScope): string {
    return (
      this.prefix +
      createHash("sha256")
        .update(JSON.stringify([namespace, operation, userId, key]))
        .digest("hex")
    );
  }
}
