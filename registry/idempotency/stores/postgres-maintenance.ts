// The statements of PostgresStore's maintenance, recovery of stuck records and cleanup of expired ones: each one round trip.
import type { RecoveredRecord, RecoverInput } from "../types";
import { BUMP_COUNTER, MS } from "./postgres-rows";

/** A statement with its parameters, as the client's `query(text, params)` takes them. */
export type Statement = { text: string; params: unknown[] };

/**
 * One statement: lock a bounded batch of stuck records of `table` (skipping ones another runner holds),
 * count each as a retry in `retries`, then poison the ones out of budget and free the rest.
 * Its rows are read by `recoveredRecords`.
 */
export function recoverStatement(
  table: string,
  retries: string,
  { olderThanMs, limit, maxRetries, ttlMs }: RecoverInput,
): Statement {
  return {
    text: `WITH stuck AS (
         SELECT operation, user_id, key FROM ${table}
         WHERE status = 'PROCESSING' AND updated_at < now() - $1${MS}
         ORDER BY updated_at LIMIT $2
         FOR UPDATE SKIP LOCKED
       ), counted AS (
         INSERT INTO ${retries} AS c (operation, user_id, key, retry_count, expires_at)
         SELECT operation, user_id, key, 1, now() + $4${MS} FROM stuck
         ON CONFLICT (operation, user_id, key) DO UPDATE SET ${BUMP_COUNTER}
         RETURNING operation, user_id, key, retry_count
       ), poisoned AS (
         UPDATE ${table} r SET status = 'FAILED', updated_at = now(), expires_at = now() + $4${MS}
         FROM counted c
         WHERE (r.operation, r.user_id, r.key) = (c.operation, c.user_id, c.key) AND c.retry_count >= $3
         RETURNING 1
       ), released AS (
         DELETE FROM ${table} r USING counted c
         WHERE (r.operation, r.user_id, r.key) = (c.operation, c.user_id, c.key) AND c.retry_count < $3
         RETURNING 1
       )
       SELECT operation, user_id, key, retry_count, retry_count >= $3 AS poisoned FROM counted`,
    params: [olderThanMs, limit, maxRetries, ttlMs],
  };
}

/** The rows of `recoverStatement`, as the contract reports them. */
export function recoveredRecords(rows: unknown[]): RecoveredRecord[] {
  return (
    rows as Array<{ operation: string; user_id: string; key: string; retry_count: number; poisoned: boolean }>
  ).map((row) => ({
    operation: row.operation,
    userId: row.user_id,
    key: row.key,
    retryCount: row.retry_count,
    poisoned: row.poisoned,
  }));
}

/**
 * One statement: delete a bounded batch of expired records of `table`, and apart a batch of expired
 * counters of `retries`. Its one row's `deleted` counts the records.
 */
export function cleanupStatement(table: string, retries: string, limit: number): Statement {
  return {
    text: `WITH expired AS (
         SELECT operation, user_id, key FROM ${table}
         WHERE expires_at <= now() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED
       ), deleted AS (
         DELETE FROM ${table} r USING expired e
         WHERE (r.operation, r.user_id, r.key) = (e.operation, e.user_id, e.key) RETURNING 1
       ), expired_counters AS (
         SELECT operation, user_id, key FROM ${retries}
         WHERE expires_at <= now() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED
       ), deleted_counters AS (
         DELETE FROM ${retries} c USING expired_counters e
         WHERE (c.operation, c.user_id, c.key) = (e.operation, e.user_id, e.key) RETURNING 1
       )
       SELECT (SELECT count(*) FROM deleted)::int AS deleted`,
    params: [limit],
  };
}
