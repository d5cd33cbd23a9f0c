// How MySqlStore's statements find, write and read its rows: the scope's hash key, the server's clock, and what comes back.
import { createHash } from "node:crypto";
import type { IdempotencyScope } from "../types";
import type { RecordRow, RecordTimes } from "./record-row";

/** A record's row by its key: its one parameter is `scopeParams`. */
export const SCOPE = "scope_hash = ?";
export const NOW = "UTC_TIMESTAMP(6)";
/** A record's columns, with both timestamps as epoch milliseconds. */
export const COLUMNS =
  "operation, user_id, `key`, request_hash, status, response, token, " +
  "TIMESTAMPDIFF(MICROSECOND, '1970-01-01', expires_at) DIV 1000 AS expires_ms, " +
  "TIMESTAMPDIFF(MICROSECOND, '1970-01-01', updated_at) DIV 1000 AS updated_ms";

/** A record as `COLUMNS` and the create procedure return it. */
export type Row = RecordRow & {
  expires_ms: number | string;
  updated_ms: number | string;
  steps?: string | null;
};

/** mysql2's answer to a write. */
export type WriteResult = { affectedRows: number; insertId: number };

/** The record's primary key: SHA-256 of the scope, each part length-prefixed so no two scopes share it. */
export function scopeHash({ operation, userId, key }: IdempotencyScope): Buffer {
  return createHash("sha256").update(`${operation.length}:${operation}${userId.length}:${userId}${key}`).digest();
}

export function scopeParams(scope: IdempotencyScope): [Buffer] {
  return [scopeHash(scope)];
}

/** The procedure and COLUMNS return both timestamps as epoch milliseconds (a BIGINT, as text with bigNumberStrings). */
export function mySqlTimes(row: Row): RecordTimes {
  return { expiresAt: new Date(Number(row.expires_ms)), updatedAt: new Date(Number(row.updated_ms)) };
}
