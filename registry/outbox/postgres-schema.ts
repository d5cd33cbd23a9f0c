// The one source of the outbox's PostgreSQL schema: addToOutbox, the relay, the tests and `blocks migrate` render it.

export const DEFAULT_OUTBOX_TABLE = "outbox_messages";

const TABLE_NAME = /^(?:[a-z_][a-z0-9_]{0,62}\.)?[a-z_][a-z0-9_]{0,40}$/;

/** Throws unless `table` is a plain lower-case identifier, optionally schema-qualified. */
export function checkTableName(table: string): string {
  if (!TABLE_NAME.test(table)) {
    throw new Error(
      `Invalid outbox table name "${table}": use lower-case letters, digits and underscores (at most 41), optionally prefixed by "schema.".`,
    );
  }
  return table;
}

/**
 * The DDL, one statement per entry; every statement is safe to run again.
 *
 * A claimed row's lease is its `available_at` moved into the future: one column says both "not due
 * before a retry's backoff" and "being published by a relay until then", so one partial index serves
 * the claim, and a relay that dies mid-batch gives its rows back when the lease runs out.
 *
 * @example
 * for (const sql of schemaStatements()) await pool.query(sql);
 */
export function schemaStatements(table = DEFAULT_OUTBOX_TABLE): string[] {
  const bare = checkTableName(table).split(".").pop() as string;
  return [
    `CREATE TABLE IF NOT EXISTS ${table} (
  id            UUID        NOT NULL,
  topic         TEXT        NOT NULL,
  key           TEXT,
  payload       JSONB       NOT NULL,
  headers       JSONB       NOT NULL DEFAULT '{}'::jsonb,
  created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
  -- Due from then on: after the delay, a retry's backoff, or a relay's lease on it.
  available_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
  -- Claims so far; a claim adds one, so a relay's late report on an older claim is recognised and ignored.
  attempts      INTEGER     NOT NULL DEFAULT 0,
  last_error    TEXT,
  published_at  TIMESTAMPTZ,
  -- Set once attempts ran out; the row stays for inspection and replay, the relay never takes it again.
  dead_at       TIMESTAMPTZ,
  CONSTRAINT ${bare}_pkey PRIMARY KEY (id)
)`,
    // The claim: due rows, oldest first, among the pending ones only (published rows do not slow it).
    `CREATE INDEX IF NOT EXISTS ${bare}_due_idx ON ${table} (available_at) WHERE published_at IS NULL AND dead_at IS NULL`,
    // The cleanup: published rows past the retention, oldest first, in bounded batches.
    `CREATE INDEX IF NOT EXISTS ${bare}_published_idx ON ${table} (published_at) WHERE published_at IS NOT NULL`,
  ];
}

/**
 * Undoes `schemaStatements(table)`.
 *
 * @example
 * for (const sql of dropStatements("outbox_messages")) await pool.query(sql);
 */
export function dropStatements(table: string): string[] {
  return [`DROP TABLE IF EXISTS ${checkTableName(table)}`];
}

/**
 * The tables `schemaStatements(table)` creates, e.g. for `blocks migrate` to check they exist.
 *
 * @example
 * schemaTables("outbox_messages"); // ["outbox_messages"]
 */
export function schemaTables(table: string): string[] {
  return [checkTableName(table)];
}

/** The whole DDL as one script, e.g. for a migration file. */
export function schemaSql(table = DEFAULT_OUTBOX_TABLE): string {
  return schemaStatements(table)
    .map((statement) => `${statement};\n`)
    .join("\n");
}
