// What the PostgreSQL store's statements return, and how its timestamps are read.
import type { RecordRow, RecordTimes } from "./record-row";

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
