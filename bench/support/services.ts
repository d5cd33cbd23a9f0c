// The run's own PostgreSQL tables, Redis keys and helper processes: created with unique names, removed at the end.
import pg from "pg";
import { Redis } from "ioredis";
import { PostgresStore } from "@/blocks/idempotency";
import { dropStatements as dropIdempotencyStatements } from "@/blocks/idempotency/stores/postgres-schema";
import { PostgresRateLimitStore } from "@/blocks/rate-limiter/stores/postgres-store";
import { dropStatements } from "@/blocks/rate-limiter/stores/postgres-schema";
import { assertLoopback, settings } from "../config";

/** A short id that every table, key prefix and Idempotency-Key of this run contains. */
export const runId = `b${process.pid.toString(36)}${Math.random().toString(36).slice(2, 7)}`;

/** Every table this run created, with the statements that remove it. */
const tables = new Map<string, string[]>();
/** What else the run started (a Redis Cluster, ...), each as the promise of its stop function. */
const running = new Set<Promise<(() => Promise<void>) | undefined>>();
const SCAN_BATCH = 1_000;
const MAX_SCAN_STEPS = 100_000;

/** `options`: server settings for every session of the pool, e.g. "-c commit_delay=1000". */
export function openPool(max = 4, options?: string): pg.Pool {
  return new pg.Pool({ connectionString: assertLoopback(settings.databaseUrl), max, ...(options && { options }) });
}

export function openRedis(): Redis {
  return new Redis(assertLoopback(settings.redisUrl), { maxRetriesPerRequest: 1 });
}

/** Creates a fresh table with the block's own DDL, remembered for `dropRunTables`. */
export async function createRunTable(pool: pg.Pool, purpose: string): Promise<string> {
  const table = `bench_${runId}_${purpose}`;
  runTableName(purpose, dropIdempotencyStatements(table));
  await new PostgresStore(pool, { table }).createSchema();
  return table;
}

/** A fresh table of the rate-limiter block's PostgreSQL store. */
export async function createRateLimitTable(pool: pg.Pool, purpose: string): Promise<string> {
  const table = `bench_${runId}_${purpose}`;
  runTableName(purpose, dropStatements(table));
  await new PostgresRateLimitStore(pool, { table }).createSchema();
  return table;
}

/** The run's name for a table the caller creates itself; `drop` (default: DROP TABLE) removes it at the end. */
export function runTableName(purpose: string, drop?: string[]): string {
  const table = `bench_${runId}_${purpose}`;
  tables.set(table, drop ?? [`DROP TABLE IF EXISTS ${table}`]);
  return table;
}

export async function dropRunTable(pool: pg.Pool, table: string): Promise<void> {
  for (const statement of tables.get(table) ?? dropIdempotencyStatements(table)) await pool.query(statement);
  tables.delete(table);
}

export async function dropRunTables(pool: pg.Pool): Promise<void> {
  for (const table of [...tables.keys()]) await dropRunTable(pool, table);
}

/**
 * Starts something the run must stop (a Redis Cluster, a local DynamoDB): `stopEverything` stops it
 * even when Ctrl-C comes while it is still starting, by waiting for the start to finish first.
 */
export async function startForRun<T>(
  start: Promise<T>,
  stop: (value: T) => Promise<void>,
): Promise<{ value: T; stop(): Promise<void> }> {
  let stopped = false;
  const stopper = start.then(
    (value) => async () => {
      if (stopped) return;
      stopped = true;
      await stop(value);
    },
    () => undefined,
  );
  running.add(stopper);
  const value = await start;
  return {
    value,
    stop: async () => {
      running.delete(stopper);
      await (
        await stopper
      )?.();
    },
  };
}

export async function stopEverything(): Promise<void> {
  for (const stopper of [...running]) {
    running.delete(stopper);
    await (await stopper)?.().catch((err: unknown) => console.error("bench clean-up:", err));
  }
}

/** Deletes every Redis key containing the run id (ours, and the peers' which embed the Idempotency-Key). */
export async function deleteRunKeys(redis: Redis): Promise<number> {
  let cursor = "0";
  let deleted = 0;
  for (let step = 0; step < MAX_SCAN_STEPS; step++) {
    const [next, keys] = await redis.scan(cursor, "MATCH", `*${runId}*`, "COUNT", SCAN_BATCH);
    if (keys.length) deleted += await redis.unlink(...keys);
    cursor = next;
    if (cursor === "0") break;
  }
  return deleted;
}
