// Test services from the environment only: DATABASE_URL and REDIS_URL, else PGlite and no Redis.
import { dropStatements } from "@/blocks/idempotency/stores/postgres-schema";
import type { SqlClient } from "@/blocks/idempotency/stores/postgres-store";

/**
 * Vendored suites set their own timeouts rather than rely on the project's vitest config: PGlite
 * compiles its WebAssembly on start, which takes seconds (more on a busy CI machine).
 */
export const SERVICE_START_TIMEOUT_MS = 120_000;
export const SUITE_TEST_TIMEOUT_MS = 30_000;

export type TestDatabase = { name: "postgres" | "pglite"; client: SqlClient; close(): Promise<void> };

/** The databases a store suite runs against: always PGlite, plus real PostgreSQL when DATABASE_URL is set. */
export function testDatabaseNames(): Array<TestDatabase["name"]> {
  return process.env.DATABASE_URL ? ["pglite", "postgres"] : ["pglite"];
}

/** Opens one database for a test file (PGlite takes seconds to start: share it across the file). */
export async function openTestDatabase(name: TestDatabase["name"]): Promise<TestDatabase> {
  if (name === "postgres") {
    const url = process.env.DATABASE_URL;
    if (!url) throw new Error("openTestDatabase('postgres') needs DATABASE_URL.");
    const { default: pg } = await import("pg");
    const pool = new pg.Pool({ connectionString: url, max: 20 });
    return { name, client: pool, close: () => pool.end() };
  }
  const { PGlite } = await import("@electric-sql/pglite");
  const db = new PGlite();
  await db.waitReady;
  return { name, client: db, close: () => db.close() };
}

/** A table name no other test file uses, so suites can share one real database in parallel. */
export function uniqueTableName(prefix = "idem"): string {
  return `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
}

/** Drops a table, its retry counters and its functions (the schema's own down step). */
export async function dropTables(client: SqlClient, table: string): Promise<void> {
  for (const statement of dropStatements(table)) await client.query(statement);
}

export const redisUrl = process.env.REDIS_URL;

/** Opens Redis at REDIS_URL with fail-fast settings (no offline queue to hang on), once connected. */
export async function openTestRedis(url = redisUrl) {
  if (!url) throw new Error("openTestRedis needs REDIS_URL.");
  const { Redis } = await import("ioredis");
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
  await redis.connect();
  return redis;
}
