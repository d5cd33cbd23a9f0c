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
 * The function `create` calls: insert the record (and read the steps earlier attempts recorded), or
 * read the one that holds the key. A function, not one statement, because PostgreSQL keeps a PL/pgSQL
 * function's plans for the connection's life, where an insert-or-read statement is planned again on
 * every call (4x the time of the insert itself). Plain SQL and per connection, so it works on PGlite
 * and through transaction poolers, unlike prepared statements. (Named `_claim`: `_create`, its
 * predecessor without steps, returned other columns, and a function's result type cannot be replaced.)
 */
export function createFunctionName(table: string): string {
  return `${checkTableName(table)}_claim`;
}

/** The function of schemas migrated before steps; dropped with the rest. */
function formerCreateFunctionName(table: string): string {
  return `${checkTableName(table)}_create`;
}

/** The function markSuccess and markFailed call: the owner's completion, planned once per connection too. */
export function completeFunctionName(table: string): string {
  return `${checkTableName(table)}_complete`;
}

/** The argument types of each function, which name it for DROP FUNCTION. */
const CREATE_ARGUMENTS = "text, text, text, text, uuid, float8, text";
const COMPLETE_ARGUMENTS = "text, text, text, uuid, text, text, float8";

function completeFunction(table: string): string {
  return `CREATE OR REPLACE FUNCTION ${completeFunctionName(table)}(
  p_operation text, p_user_id text, p_key text, p_token uuid, p_status text, p_response text, p_ttl_ms float8
) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  -- Only the execution holding the token completes the record, and only once.
  UPDATE ${table} SET status = p_status, response = p_response, updated_at = now(), expires_at = now() + p_ttl_ms * interval '1 millisecond'
  WHERE operation = p_operation AND user_id = p_user_id AND key = p_key AND token = p_token AND status = 'PROCESSING';
  RETURN FOUND;
END
$$`;
}

function createFunction(table: string): string {
  const retries = retryTableName(table);
  // `use_column`: the result columns share the table's column names; inside the body a name means the column.
  return `CREATE OR REPLACE FUNCTION ${createFunctionName(table)}(
  p_operation text, p_user_id text, p_key text, p_request_hash text, p_token uuid, p_ttl_ms float8,
  -- Inside a transaction (executeInTransaction): how long the insert waits for a duplicate's uncommitted record.
  p_lock_timeout text DEFAULT NULL
) RETURNS TABLE (
  created boolean, expired boolean, operation text, user_id text, key text, request_hash text,
  status text, response text, token uuid, expires_at timestamptz, updated_at timestamptz, steps text
) LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  IF p_lock_timeout IS NOT NULL THEN
    PERFORM set_config('lock_timeout', p_lock_timeout, true);
  END IF;
  INSERT INTO ${table} (operation, user_id, key, request_hash, status, token, expires_at)
  VALUES (p_operation, p_user_id, p_key, p_request_hash, 'PROCESSING', p_token, now() + p_ttl_ms * interval '1 millisecond')
  ON CONFLICT (operation, user_id, key) DO NOTHING;
  IF FOUND THEN
    created := true;
    -- What earlier attempts of this request recorded (one primary-key lookup; none for a fresh key).
    SELECT c.steps::text INTO steps FROM ${retries} c
    WHERE c.operation = p_operation AND c.user_id = p_user_id AND c.key = p_key
      AND c.request_hash = p_request_hash AND c.expires_at > now();
    RETURN NEXT;
    RETURN;
  END IF;
  -- The key is taken: read the row that holds it (none if it was freed since; the caller asks again).
  RETURN QUERY SELECT false, r.expires_at <= now(), r.operation, r.user_id, r.key, r.request_hash,
    r.status, r.response, r.token, r.expires_at, r.updated_at, NULL::text
  FROM ${table} r WHERE r.operation = p_operation AND r.user_id = p_user_id AND r.key = p_key;
END
$$`;
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
    // Recovery points live beside the retry counter, which outlives the record a failure deletes.
    // Each value is a step's result as JSON text (a jsonb string), so its bytes survive as they were.
    `ALTER TABLE ${retries} ADD COLUMN IF NOT EXISTS request_hash TEXT`,
    `ALTER TABLE ${retries} ADD COLUMN IF NOT EXISTS steps JSONB`,
    createFunction(table),
    completeFunction(table),
  ];
}

/** The whole DDL as one script, e.g. for a migration file. */
export function postgresSchema(table = "idempotency_records"): string {
  return postgresSchemaStatements(table)
    .map((statement) => `${statement};\n`)
    .join("\n");
}

// The schema contract every block with a table exports, so `blocks migrate` renders it without naming the block.

/** The statements that create the block's tables; each is safe to run again. */
export function schemaStatements(table = "idempotency_records"): string[] {
  return postgresSchemaStatements(table);
}

/** The statements that remove them (a migration's down step), dependants first. */
export function dropStatements(table: string): string[] {
  return [
    `DROP TABLE IF EXISTS ${retryTableName(table)}`,
    `DROP TABLE IF EXISTS ${checkTableName(table)}`,
    `DROP FUNCTION IF EXISTS ${createFunctionName(table)}(${CREATE_ARGUMENTS})`,
    `DROP FUNCTION IF EXISTS ${formerCreateFunctionName(table)}(${CREATE_ARGUMENTS})`,
    `DROP FUNCTION IF EXISTS ${completeFunctionName(table)}(${COMPLETE_ARGUMENTS})`,
  ];
}

/** The tables whose presence means the migration ran. */
export function schemaTables(table: string): string[] {
  return [checkTableName(table), retryTableName(table)];
}

/** The functions the store calls, which a migration written before they existed lacks. */
export function schemaFunctions(table: string): string[] {
  return [createFunctionName(table), completeFunctionName(table)];
}
