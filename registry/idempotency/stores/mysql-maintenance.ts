// The statements of MySqlStore's maintenance: the stuck records recovery takes over (see takeover-recovery.ts), and cleanup.
import type { RecoverInput } from "../types";
import { NOW, SCOPE, scopeParams, type Row } from "./mysql-rows";
import type { StuckRecord } from "./takeover-recovery";

/** A statement with its values, as the client's `query(sql, values)` takes them. */
export type Statement = { sql: string; values: unknown[] };

/** The oldest PROCESSING records of `table` past the window, at most `limit`; its rows are read by `stuckRecords`. */
export function stuckStatement(table: string, { olderThanMs, limit }: RecoverInput): Statement {
  return {
    sql: `SELECT operation, user_id, \`key\`, token FROM ${table}
       WHERE status = 'PROCESSING' AND updated_at < ${NOW} - INTERVAL ? MICROSECOND
       ORDER BY updated_at LIMIT ?`,
    values: [Math.round(olderThanMs * 1000), limit],
  };
}

export function stuckRecords(rows: unknown): StuckRecord[] {
  return (rows as Array<Pick<Row, "operation" | "user_id" | "key" | "token">>).map((row) => ({
    operation: row.operation,
    userId: row.user_id,
    key: row.key,
    token: row.token,
  }));
}

/** Recovery's takeover of `stuck` under the `recovery` token, fenced like every mark: one row changed when it took it. */
export function takeoverStatement(table: string, stuck: StuckRecord, recovery: string, olderThanMs: number): Statement {
  return {
    sql: `UPDATE ${table} SET token = ?, updated_at = ${NOW} WHERE ${SCOPE} AND token = ? AND status = 'PROCESSING'
         AND updated_at < ${NOW} - INTERVAL ? MICROSECOND`,
    values: [recovery, ...scopeParams(stuck), stuck.token, Math.round(olderThanMs * 1000)],
  };
}

/** Two statements: at most `limit` expired records of `table` (the count cleanup reports), then as many expired counters. */
export function cleanupStatements(table: string, retries: string, limit: number): [Statement, Statement] {
  return [
    { sql: `DELETE FROM ${table} WHERE expires_at <= ${NOW} ORDER BY expires_at LIMIT ?`, values: [limit] },
    { sql: `DELETE FROM ${retries} WHERE expires_at <= ${NOW} ORDER BY expires_at LIMIT ?`, values: [limit] },
  ];
}
