// The run's own PostgreSQL tables and Redis keys: created with unique names, removed at the end.
import pg from "pg";
import { Redis } from "ioredis";
import { PostgresStore } from "@/blocks/idempotency";
import { assertLoopback, settings } from "../config";

/** A short id that every table, key prefix and Idempotency-Key of this run contains. */
export const runId = `b${process.pid.toString(36)}${Math.random().toString(36).slice(2, 7)}`;

const tables = new Set<string>();
const SCAN_BATCH = 1_000;
const MAX_SCAN_STEPS = 100_000;

export function openPool(max = 4): pg.Pool {
  return new pg.Pool({ connectionString: assertLoopback(settings.databaseUrl), max });
}

export function openRedis(): Redis {
  return new Redis(assertLoopback(settings.redisUrl), { maxRetriesPerRequest: 1 });
}

/** Creates a fresh table with the block's own DDL, remembered for `dropRunTables`. */
export async function createRunTable(pool: pg.Pool, purpose: string): Promise<string> {
  const table = `bench_${runId}_${purpose}`;
  tables.add(table);
  await new PostgresStore(pool, { table }).createSchema();
  return table;
}

export async function dropRunTable(pool: pg.Pool, table: string): Promise<void> {
  await pool.query(`DROP TABLE IF EXISTS ${table}, ${table}_retries`);
  tables.delete(table);
}

export async function dropRunTables(pool: pg.Pool): Promise<void> {
  for (const table of [...tables]) await dropRunTable(pool, table);
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
