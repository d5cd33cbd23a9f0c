// The one source of the rate limiter's PostgreSQL schema: the store, the tests and `blocks migrate` render it.

export const DEFAULT_RATE_LIMIT_TABLE = "rate_limits";

const TABLE_NAME = /^(?:[a-z_][a-z0-9_]{0,62}\.)?[a-z_][a-z0-9_]{0,40}$/;

/** Throws unless `table` is a plain lower-case identifier, optionally schema-qualified. */
export function checkTableName(table: string): string {
  if (!TABLE_NAME.test(table)) {
    throw new Error(
      `Invalid rate-limit table name "${table}": use lower-case letters, digits and underscores (at most 41), optionally prefixed by "schema.".`,
    );
  }
  return table;
}

/**
 * The DDL, one statement per entry; every statement is safe to run again.
 *
 * UNLOGGED: rate-limit state is worth less than the WAL it would write on every request. After a
 * crash or a failover to a replica the table is empty, which gives every key a full quota once.
 *
 * @example
 * for (const sql of schemaStatements()) await pool.query(sql);
 */
export function schemaStatements(table = DEFAULT_RATE_LIMIT_TABLE): string[] {
  const bare = checkTableName(table).split(".").pop() as string;
  const schema = table.includes(".") ? `${table.split(".")[0]}.` : "";
  return [
    // A table migrated when the TAT was kept in milliseconds: rename the column. Its values, read as
    // microseconds, lie in the past, so every key gets its full quota once (as after a crash).
    `DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('${table}') AND attname = 'tat_ms' AND NOT attisdropped) THEN
    ALTER TABLE ${table} RENAME COLUMN tat_ms TO tat_us;
    DROP INDEX IF EXISTS ${schema}${bare}_tat_ms_idx;
  END IF;
END $$`,
    `CREATE UNLOGGED TABLE IF NOT EXISTS ${table} (
  key      TEXT    NOT NULL,
  -- GCRA's theoretical arrival time: µs since the epoch, on the database's clock.
  tat_us   BIGINT  NOT NULL,
  -- The last decision, so the one statement that makes it can also report it.
  allowed  BOOLEAN NOT NULL,
  CONSTRAINT ${bare}_pkey PRIMARY KEY (key)
)`,
    // Cleanup deletes keys whose debt is paid, oldest first, without a sequential scan.
    `CREATE INDEX IF NOT EXISTS ${bare}_tat_us_idx ON ${table} (tat_us)`,
  ];
}

/**
 * Undoes `schemaStatements(table)`.
 *
 * @example
 * for (const sql of dropStatements("rate_limits")) await pool.query(sql);
 */
export function dropStatements(table: string): string[] {
  return [`DROP TABLE IF EXISTS ${checkTableName(table)}`];
}

/**
 * The tables `schemaStatements(table)` creates, e.g. for `blocks migrate` to check they exist.
 *
 * @example
 * schemaTables("rate_limits"); // ["rate_limits"]
 */
export function schemaTables(table: string): string[] {
  return [checkTableName(table)];
}

/** The whole DDL as one script, e.g. for a migration file. */
export function schemaSql(table = DEFAULT_RATE_LIMIT_TABLE): string {
  return schemaStatements(table)
    .map((statement) => `${statement};\n`)
    .join("\n");
}
