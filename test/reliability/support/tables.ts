// Per-run PostgreSQL tables: the block's records table and the side-effect table each protected operation writes.
import type pg from "pg";
import { dropStatements, postgresSchemaStatements } from "../../../registry/idempotency/stores/postgres-schema";

/** A name no other run or suite uses, so scenarios can share the database with everything else. */
export function uniqueName(prefix: string): string {
  return `rel_${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * The side-effect table: one row per execution of a protected operation, written inside it.
 * Counting rows per key is how the suite knows how many times an operation really ran.
 */
export async function createEffectsTable(pool: pg.Pool, table: string): Promise<void> {
  await pool.query(`CREATE TABLE ${table} (
    id BIGSERIAL PRIMARY KEY, key TEXT NOT NULL, user_id TEXT NOT NULL, worker TEXT NOT NULL, at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
  )`);
}

/** Executions per key. */
export async function executionsByKey(pool: pg.Pool, table: string): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ key: string; n: number }>(
    `SELECT key, count(*)::int AS n FROM ${table} GROUP BY key`,
  );
  return new Map(rows.map((row) => [row.key, row.n]));
}

/** Executions of one key (of one user, when given). */
/** Executions per (user, key), keyed "user key": for scenarios where users differ. */
export async function executionsByScope(pool: pg.Pool, table: string): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ scope: string; n: number }>(
    `SELECT user_id || ' ' || key AS scope, count(*)::int AS n FROM ${table} GROUP BY user_id, key`,
  );
  return new Map(rows.map((row) => [row.scope, row.n]));
}

export async function executionsOf(pool: pg.Pool, table: string, key: string, userId?: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${table} WHERE key = $1${userId === undefined ? "" : " AND user_id = $2"}`,
    userId === undefined ? [key] : [key, userId],
  );
  return rows[0]?.n ?? 0;
}

/** Creates the block's own schema (its one DDL source) under a unique table name. */
export async function createRecordsTable(pool: pg.Pool, table: string): Promise<void> {
  for (const statement of postgresSchemaStatements(table)) await pool.query(statement);
}

/** Record counts by status. */
export async function recordsByStatus(pool: pg.Pool, table: string): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM ${table} GROUP BY status`,
  );
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}

export async function processingKeys(pool: pg.Pool, table: string): Promise<string[]> {
  const { rows } = await pool.query<{ key: string }>(`SELECT key FROM ${table} WHERE status = 'PROCESSING'`);
  return rows.map((row) => row.key);
}

export async function recordOf(pool: pg.Pool, table: string, key: string) {
  const { rows } = await pool.query<{
    status: string;
    response: string | null;
    token: string;
    expired: boolean;
    updated_at: Date;
  }>(`SELECT status, response, token, expires_at <= now() AS expired, updated_at FROM ${table} WHERE key = $1`, [key]);
  return rows[0];
}

export async function retryCountOf(pool: pg.Pool, table: string, key: string): Promise<number> {
  const { rows } = await pool.query<{ retry_count: number }>(
    `SELECT retry_count FROM ${table}_retries WHERE key = $1`,
    [key],
  );
  return rows[0]?.retry_count ?? 0;
}

/**
 * Moves the store's clock for one key (or all): its timestamps become `ms` older, so recovery sees a
 * stalled lease without the test sleeping through a real timeout. `expiry: true` ages the expiry too.
 */
export async function ageRecords(
  pool: pg.Pool,
  table: string,
  ms: number,
  key?: string,
  { expiry = false } = {},
): Promise<void> {
  const shift = `${Math.round(ms)} * interval '1 millisecond'`;
  const expires = expiry ? `, expires_at = expires_at - ${shift}` : "";
  await pool.query(
    `UPDATE ${table} SET updated_at = updated_at - ${shift}, created_at = created_at - ${shift}${expires}${key === undefined ? "" : " WHERE key = $1"}`,
    key === undefined ? [] : [key],
  );
}

export async function dropTables(pool: pg.Pool, ...tables: string[]): Promise<void> {
  for (const statement of tables.flatMap(dropStatements)) await pool.query(statement);
}
