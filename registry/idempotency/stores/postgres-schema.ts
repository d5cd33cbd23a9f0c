// The one source of the PostgreSQL schema: the store, the tests and the CLI's migration all render it.

const TABLE_NAME = /^(?:[a-z_][a-z0-9_]{0,62}\.)?[a-z_][a-z0-9_]{0,39}$/;

/** Throws unless `table` is a plain lower-case identifier, optionally schema-qualified. */
export function checkTableName(table: string): string {
  if (!TABLE_NAME.test(table)) {
    throw new Error(
      `Invalid idempotency table name "${table}": use lower-case letters, digits and underscores (at most 40), optionally prefixed by "schema.".`,
    );
  }
  return table;
}

/** The retry counters live in their own table, so they outlive the records a transient failure deletes. */
export function retryTableName(table: string): string {
  return `${checkTableName(table)}_retries`;
}

/**
 * The DDL, one statement per entry; every statement is safe to run again.
 *
 * @example
 * for (const sql of postgresSchemaStatements()) await pool.query(sql);
 */
export function postgresSchemaStatements(table = "idempotency_records"): string[] {
  const retries = retryTableName(table);
  const bare = table.split(".").pop() as string;
  return [
    `CREATE TABLE IF NOT EXISTS ${table} (
  operation     TEXT        NOT NULL,
  user_id       TEXT        NOT NULL,
  key           TEXT        NOT NULL,
  request_hash  TEXT        NOT NULL,
  status        TEXT        NOT NULL CHECK (status IN ('PROCESSING', 'SUCCESS', 'FAILED')),
  -- TEXT, not JSONB: JSONB reorders object keys, and a replay must send the first response's bytes.
  response      TEXT,
  -- Fencing token of the execution that owns the record: stale workers cannot mark or free it.
  token         UUID        NOT NULL,
  expires_at    TIMESTAMPTZ NOT NULL,
  created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
  -- Renewed by the heartbeat; recovery frees PROCESSING records that stopped renewing it.
  updated_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
  -- The unique constraint that makes create atomic: one record per (operation, user, key).
  CONSTRAINT ${bare}_scope_key PRIMARY KEY (operation, user_id, key)
)`,
    `CREATE INDEX IF NOT EXISTS ${bare}_expires_at_idx ON ${table} (expires_at)`,
    `CREATE INDEX IF NOT EXISTS ${bare}_processing_idx ON ${table} (updated_at) WHERE status = 'PROCESSING'`,
    `CREATE TABLE IF NOT EXISTS ${retries} (
  operation     TEXT        NOT NULL,
  user_id       TEXT        NOT NULL,
  key           TEXT        NOT NULL,
  retry_count   INTEGER     NOT NULL,
  expires_at    TIMESTAMPTZ NOT NULL,
  CONSTRAINT ${bare}_retries_scope_key PRIMARY KEY (operation, user_id, key)
)`,
    `CREATE INDEX IF NOT EXISTS ${bare}_retries_expires_at_idx ON ${retries} (expires_at)`,
  ];
}

/** The whole DDL as one script, e.g. for a migration file. */
export function postgresSchema(table = "idempotency_records"): string {
  return postgresSchemaStatements(table).map((statement) => `${statement};\n`).join("\n");
}

// The schema contract every block with a table exports, so `blocks migrate` renders it without naming the block.

/** The statements that create the block's tables; each is safe to run again. */
export function schemaStatements(table = "idempotency_records"): string[] {
  return postgresSchemaStatements(table);
}

/** The statements that remove them (a migration's down step), dependants first. */
export function dropStatements(table: string): string[] {
  return [`DROP TABLE IF EXISTS ${retryTableName(table)}`, `DROP TABLE IF EXISTS ${checkTableName(table)}`];
}

/** The tables whose presence means the migration ran. */
export function schemaTables(table: string): string[] {
  return [checkTableName(table), retryTableName(table)];
}
