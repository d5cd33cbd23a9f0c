// What the PostgreSQL store's statements return, turned into the contract's shapes.
import type { IdempotencyRecord } from "../types";

export type Row = {
  operation: string;
  user_id: string;
  key: string;
  request_hash: string;
  status: IdempotencyRecord["status"];
  response: string | null;
  token: string;
  expires_at: Date;
  updated_at: Date;
  /** The steps as JSON text (a jsonb object of JSON texts), null when none were recorded. */
  steps: string | null;
};

/** A record as `create` (DUPLICATE) and `get` read it; `get` adds the steps. */
export function toRecord(row: Row): IdempotencyRecord {
  return {
    operation: row.operation,
    userId: row.user_id,
    key: row.key,
    requestHash: row.request_hash,
    status: row.status,
    response: row.response,
    token: row.token,
    expiresAt: new Date(row.expires_at),
    updatedAt: new Date(row.updated_at),
  };
}
