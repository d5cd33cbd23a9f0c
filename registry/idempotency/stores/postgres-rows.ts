// How PostgresStore's statements write and read its rows: SQL the store and its maintenance share, and what comes back.
import type { RecordRow, RecordTimes } from "./record-row";

/** A parameter in milliseconds, as an interval to add to now(). */
export const MS = "::float8 * interval '1 millisecond'";

/** An expired counter starts again at 1, without steps: the key it counted for has expired too. */
export const BUMP_COUNTER =
  "retry_count = CASE WHEN c.expires_at <= now() THEN 1 ELSE c.retry_count + 1 END, " +
  "steps = CASE WHEN c.expires_at <= now() THEN NULL ELSE c.steps END, expires_at = EXCLUDED.expires_at";

/** A record's columns, from its row `r` (`get` adds the steps). */
export const COLUMNS =
  "r.operation, r.user_id, r.key, r.request_hash, r.status, r.response, r.token, r.expires_at, r.updated_at";

/** A record as `COLUMNS` and the create function return it. */
export type Row = RecordRow & {
  expires_at: Date;
  updated_at: Date;
  /** The steps as JSON text (a jsonb object of JSON texts), null when none were recorded. */
  steps: string | null;
};

/** timestamptz arrives as a Date (pg, postgres.js, PGlite) or as its text (some ORMs' raw queries). */
export function postgresTimes(row: Row): RecordTimes {
  return { expiresAt: new Date(row.expires_at), updatedAt: new Date(row.updated_at) };
}
