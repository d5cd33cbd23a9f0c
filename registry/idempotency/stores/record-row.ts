// A record as the SQL stores' statements return it (and its steps column), turned into the contract's shape: one mapping for PostgreSQL, MySQL and SQLite.
import type { IdempotencyRecord, StepResults } from "../types";

/** The columns every SQL store returns for a record; its two timestamps come in each store's own form. */
export type RecordRow = {
  operation: string;
  user_id: string;
  key: string;
  request_hash: string;
  status: IdempotencyRecord["status"];
  response: string | null;
  token: string;
};

/** The record's expiry and last update, read from a row by the store that knows how it returns them. */
export type RecordTimes = { expiresAt: Date; updatedAt: Date };

/**
 * A record as `create` (DUPLICATE) and `get` read it; `get` adds the steps.
 *
 * @example
 * toRecord(row, (r) => ({ expiresAt: new Date(Number(r.expires_at)), updatedAt: new Date(Number(r.updated_at)) }));
 */
export function toRecord<Row extends RecordRow>(row: Row, times: (row: Row) => RecordTimes): IdempotencyRecord {
  return {
    operation: row.operation,
    userId: row.user_id,
    key: row.key,
    requestHash: row.request_hash,
    status: row.status,
    response: row.response,
    token: row.token,
    ...times(row),
  };
}

const NO_STEPS: StepResults = Object.freeze({});

/** A SQL store's steps column (a JSON object of JSON texts); none is an empty, shared object. */
export function parseSteps(steps: string | null | undefined): StepResults {
  return typeof steps === "string" ? (JSON.parse(steps) as StepResults) : NO_STEPS;
}
