// RedisStore: records in Redis (read STORES.md on what Redis may lose in a crash). A Redis Cluster works too.
import { Redis } from "ioredis";
import { RedisStore } from "../stores/redis-store";
import { recoveryJobs } from "./recovery-jobs";
import { IDEMPOTENCY_TABLE } from "./table";
import type { OpenedDatabase } from "./variants";

/** Where the records live: Redis. */
export type Database = Redis;
/** RedisStore runs no transactions of the app's client: `executeInTransaction` is not offered. */
export type Transaction = unknown;

/**
 * The store's Redis client; to use a Cluster, return `new Redis.Cluster([...])` and widen `Database`.
 * It fails fast when Redis is down (the handler answers STORE_UNAVAILABLE), and auto-pipelining
 * writes the commands of concurrent requests together: less CPU per request. RedisStore also takes a
 * connected node-redis client, which costs the app less CPU per command (STORES.md, "On node-redis").
 */
export function connectDatabase(url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379"): Database {
  return new Redis(url, { maxRetriesPerRequest: 1, enableAutoPipelining: true });
}

/** Records expire by themselves: the maintenance is recovery only, safe from several instances at once (no lock). */
export function openDatabase(db: Database): OpenedDatabase<Transaction> {
  return {
    store: new RedisStore(db, { table: IDEMPOTENCY_TABLE }),
    jobs: (handler, logger) => recoveryJobs(handler, logger),
    end: async () => {
      await db.quit();
    },
  };
}
