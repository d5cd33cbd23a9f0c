// Every rate-limit store the suites run against: memory, PGlite, and real Redis / PostgreSQL from the environment.
import type { Redis } from "ioredis";
import type pg from "pg";
import { MemoryRateLimitStore } from "@/blocks/rate-limiter/stores/memory-store";
import { PostgresRateLimitStore, type SqlClient } from "@/blocks/rate-limiter/stores/postgres-store";
import { dropStatements } from "@/blocks/rate-limiter/stores/postgres-schema";
import { RedisRateLimitStore } from "@/blocks/rate-limiter/stores/redis-store";
import type { RateLimitStore } from "@/blocks/rate-limiter/types";

export const redisUrl = process.env.REDIS_URL;
export const databaseUrl = process.env.DATABASE_URL;

/** A name no other test file or process uses: the servers are shared with other suites. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
}

/**
 * `stepBack(key, ms)`: leaves `key` with the TAT it would have if the store's clock had just
 * stepped back `ms` (a TAT that far ahead of now), written the way each store keeps it.
 */
export type OpenStore = {
  store: RateLimitStore;
  stepBack(key: string, ms: number): Promise<void>;
  close(): Promise<void>;
};

/**
 * `open` once per file (PGlite takes seconds to start), then `fresh()` once per test: an empty store
 * (its own table or key prefix). Names that start with "[REDIS_URL]" / "[DATABASE_URL]" need that server.
 */
export type StoreKind = { name: string; open(): Promise<{ fresh(): Promise<OpenStore>; close(): Promise<void> }> };

export const memoryKind: StoreKind = {
  name: "MemoryRateLimitStore",
  open: async () => ({
    async fresh() {
      let skewMs = 0;
      const store = new MemoryRateLimitStore({ now: () => Date.now() + skewMs });
      return {
        store,
        async stepBack(key, ms) {
          skewMs = ms;
          await store.take(key, { intervalUs: 1, capacityUs: 1 });
          skewMs = 0;
        },
        close: async () => {},
      };
    },
    close: async () => {},
  }),
};

/** PostgresRateLimitStore on any `query` client, one new table per `fresh()`. */
function postgresFresh(client: SqlClient): () => Promise<OpenStore> {
  return async () => {
    const store = new PostgresRateLimitStore(client, { table: uniqueName("rl") });
    await store.createSchema();
    return {
      store,
      async stepBack(key, ms) {
        await client.query(
          `INSERT INTO ${store.table} (key, tat_us, allowed)
           VALUES ($1, floor(extract(epoch FROM clock_timestamp()) * 1000000)::bigint + $2::bigint, true)`,
          [key, ms * 1000],
        );
      },
      async close() {
        for (const statement of dropStatements(store.table)) await client.query(statement);
      },
    };
  };
}

export const pgliteKind: StoreKind = {
  name: "PostgresRateLimitStore (PGlite)",
  async open() {
    const { PGlite } = await import("@electric-sql/pglite");
    const db = new PGlite();
    return { fresh: postgresFresh(db), close: () => db.close() };
  },
};

export const redisKind: StoreKind = {
  name: "[REDIS_URL] RedisRateLimitStore",
  async open() {
    const redis = await openRedis();
    return {
      async fresh() {
        const prefix = `${uniqueName("rl")}:`;
        return {
          store: new RedisRateLimitStore(redis, { prefix }),
          async stepBack(key, ms) {
            const [seconds, micros] = await redis.time();
            await redis.set(
              `${prefix}${key}`,
              String(Number(seconds) * 1_000_000 + Number(micros) + ms * 1000),
              "PX",
              ms,
            );
          },
          async close() {
            const keys = await redis.keys(`${prefix}*`);
            if (keys.length > 0) await redis.del(...keys);
          },
        };
      },
      close: async () => void redis.disconnect(),
    };
  },
};

export const postgresKind: StoreKind = {
  name: "[DATABASE_URL] PostgresRateLimitStore",
  async open() {
    const pool = await openPool();
    return { fresh: postgresFresh(pool), close: () => pool.end() };
  },
};

/** Kinds with a server behind them are listed (and skipped by name) even when the variable is unset. */
export const allStoreKinds: Array<StoreKind & { available: boolean }> = [
  { ...memoryKind, available: true },
  { ...pgliteKind, available: true },
  { ...redisKind, available: Boolean(redisUrl) },
  { ...postgresKind, available: Boolean(databaseUrl) },
];

export async function openRedis(url = redisUrl): Promise<Redis> {
  if (!url) throw new Error("openRedis needs REDIS_URL.");
  const { Redis } = await import("ioredis");
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
  await redis.connect();
  return redis;
}

export async function openPool(url = databaseUrl, max = 20): Promise<pg.Pool> {
  if (!url) throw new Error("openPool needs DATABASE_URL.");
  const { default: pgModule } = await import("pg");
  return new pgModule.Pool({ connectionString: url, max });
}
