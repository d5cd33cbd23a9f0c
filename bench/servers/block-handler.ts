// Builds our IdempotencyHandler for a server spec: MemoryStore, PostgresStore, PostgresStore + RedisCache, or RedisStore.
import pg from "pg";
import { Redis } from "ioredis";
import { createClient } from "redis";
import { IdempotencyHandler, PostgresStore, preparedStatements } from "@/blocks/idempotency";
import { RedisCache } from "@/blocks/idempotency/caches/redis-cache";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import { RedisStore } from "@/blocks/idempotency/stores/redis-store";
import type { ServerSpec } from "./spec";

export type Closable = { close(): Promise<void> };

export async function blockHandler(spec: ServerSpec): Promise<{ handler: IdempotencyHandler } & Closable> {
  if (spec.backend === "memory") {
    return { handler: new IdempotencyHandler(new MemoryStore()), close: async () => {} };
  }
  if (spec.backend === "redis-store") {
    const redis = new Redis(spec.redisUrl, { maxRetriesPerRequest: 1, enableAutoPipelining: true });
    const store = new RedisStore(redis, { keyPrefix: spec.redisPrefix });
    return { handler: new IdempotencyHandler(store), close: async () => void redis.disconnect() };
  }
  if (spec.backend === "redis-store-node-redis") {
    // node-redis as it comes: RESP3, commands of one tick written together.
    const client = await createClient({ url: spec.redisUrl }).connect();
    const store = new RedisStore(client, { keyPrefix: spec.redisPrefix });
    return { handler: new IdempotencyHandler(store), close: () => client.close() };
  }
  if (spec.backend === "none" || spec.backend === "redis") throw new Error(`blocks has no "${spec.backend}" store.`);
  const pool = new pg.Pool({ connectionString: spec.databaseUrl, max: spec.poolSize });
  const store = new PostgresStore(spec.backend === "postgres-prepared" ? preparedStatements(pool) : pool, {
    table: spec.table,
  });
  if (spec.backend !== "postgres+redis") {
    return { handler: new IdempotencyHandler(store), close: () => pool.end() };
  }
  const redis = new Redis(spec.redisUrl, { maxRetriesPerRequest: 1 });
  const cache = new RedisCache(redis, { prefix: spec.redisPrefix });
  return {
    handler: new IdempotencyHandler(store, cache),
    close: async () => {
      redis.disconnect();
      await pool.end();
    },
  };
}
