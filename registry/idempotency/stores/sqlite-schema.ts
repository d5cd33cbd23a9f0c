// The one source of the SQLite schema (better-sqlite3, libSQL / Turso): the store, the tests and the CLI's migration render it.

const TABLE_NAME = /^[a-z_][a-z0-9_]{0,39}$/;

/** Throws unless `table` is a plain lower-case identifier. */
export function checkSqliteTableName(table: string): string {
  if (!TABLE_NAME.test(table)) {
    throw new Error(
      `Invalid idempotency table name "${table}": use lower-case letters, digits and underscores (at most 40).`,
    );
  }
  return table;
}

/** The retry counters live in their own table, so they outlive the records a transient failure deletes. */
export function sqliteRetryTableName(table: string): string {
  return `${checkSqliteTableName(table)}_retries`;
}

/**
 * The DDL, one statement per entry; every statement is safe to run again. Times are integer
 * milliseconds since the epoch from the database's clock. Text compares byte for byte (SQLite's
 * BINARY collation), so "K" and "k" are two keys.
 *
 * @example
 * for (const sql of sqliteSchemaStatements()) db.exec(sql);
 */
export function sqliteSchemaStatements(table = "idempotency_records"): string[] {
  const retries = sqliteRetryTableName(table);
  return [
    `CREATE TABLE IF NOT EXISTS ${table} (
  operation     TEXT    NOT NULL,
  user_id       TEXT    NOT NULL,
  key           TEXT    NOT NULL,
  request_hash  TEXT    NOT NULL,
  status        TEXT    NOT NULL CHECK (status IN ('PROCESSING', 'SUCCESS', 'FAILED')),
  -- The serialized result as text, so a replay sends the first response's bytes.
  response      TEXT,
  -- Fencing token of the execution that owns the record: stale workers cannot mark or free it.
  token         TEXT    NOT NULL,
  expires_at    INTEGER NOT NULL,
  created_at    INTEGER NOT NULL,
  -- Renewed by the heartbeat; recovery frees PROCESSING records that stopped renewing it.
  updated_at    INTEGER NOT NULL,
  -- The unique key that makes create atomic: one record per (operation, user, key).
  PRIMARY KEY (operation, user_id, key)
)`,
    `CREATE INDEX IF NOT EXISTS ${table}_expires_at_idx ON ${table} (expires_at)`,
    `CREATE INDEX IF NOT EXISTS ${table}_processing_idx ON ${table} (updated_at) WHERE status = 'PROCESSING'`,
    `CREATE TABLE IF NOT EXISTS ${retries} (
  operation     TEXT    NOT NULL,
  user_id       TEXT    NOT NULL,
  key           TEXT    NOT NULL,
  retry_count   INTEGER NOT NULL,
  expires_at    INTEGER NOT NULL,
  -- Recovery points live beside the retry counter, which outlives the record a failure deletes:
  -- a JSON object (step name -> the result's JSON text) of the request hash that recorded them.
  request_hash  TEXT,
  steps         TEXT,
  PRIMARY KEY (operation, user_id, key)
)`,
    `CREATE INDEX IF NOT EXISTS ${retries}_expires_at_idx ON ${retries} (expires_at)`,
  ];
}

/** The statements that remove them (a migration's down step). */
export function sqliteDropStatements(table: string): string[] {
  return [`DROP TABLE IF EXISTS ${sqliteRetryTableName(table)}`, `DROP TABLE IF EXISTS ${checkSqliteTableName(table)}`];
}
