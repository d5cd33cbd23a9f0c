// RedisStore on node-redis: records in Redis (read STORES.md on what Redis may lose in a crash). A Redis Cluster works too.
import { createClient, type RedisClientType } from "redis";
import { RedisStore } from "../stores/redis-store";
import { recoveryJobs } from "./recovery-jobs";
import { IDEMPOTENCY_TABLE } from "./table";
import type { OpenedDatabase } from "./variants";

/** Where the records live: Redis, through node-redis. */
export type Database = RedisClientType;
/** RedisStore runs no transactions of the app's client: `executeInTransaction` is not offered. */
export type Transaction = unknown;

/**
 * The store's Redis client; for a Cluster, return `createCluster({ rootNodes: [...] })` the same way and
 * widen `Database`. It returns at once and connects in the background: until the connection is up,
 * commands wait in node-redis's offline queue, and the handler's store timeout answers a request that
 * waits too long STORE_UNAVAILABLE. Reconnections are reported on the client's "error" event.
 */
export function connectDatabase(url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379"): Database {
  const client: Database = createClient({ url });
  client.on("error", (err: unknown) => console.warn("idempotency: redis connection", err));
  client.connect().catch((err: unknown) => console.warn("idempotency: redis connect", err));
  return client;
}

/** Records expire by themselves: the maintenance is recovery only, safe from several instances at once (no lock). */
export function openDatabase(db: Database): OpenedDatabase<Transaction> {
  return {
    store: new RedisStore(db, { table: IDEMPOTENCY_TABLE }),
    jobs: (handler, logger) => recoveryJobs(handler, logger),
    end: () => db.close(),
  };
}
