// The one source of the MySQL / MariaDB schema: the store, the tests and the CLI's migration all render it.

const TABLE_NAME = /^[a-z_][a-z0-9_]{0,39}$/;

/** Throws unless `table` is a plain lower-case identifier (MySQL's database prefix is the connection's). */
export function checkMySqlTableName(table: string): string {
  if (!TABLE_NAME.test(table)) {
    throw new Error(
      `Invalid idempotency table name "${table}": use lower-case letters, digits and underscores (at most 40).`,
    );
  }
  return table;
}

/** The retry counters live in their own table, so they outlive the records a transient failure deletes. */
export function mySqlRetryTableName(table: string): string {
  return `${checkMySqlTableName(table)}_retries`;
}

/**
 * The procedure `create` calls: insert, take over an expired record, or read the one that holds the key.
 * It answers with no result set when the key is now the caller's: the common first request then costs the
 * server no result set to build and the client none to parse. It does not read earlier attempts' steps
 * (that read was a third of its cost); an operation that calls `step` reads them with one `get`.
 *
 * The name carries the version of what the procedure answers. The one before (`<table>_create`) read
 * the steps, and the store code of its time takes "no result set" to mean "no steps": were it redefined
 * under that name, an instance not yet deployed would run a retried request's completed steps again.
 * A new name lets the update migration add this one beside it, before the code that calls it ships.
 */
export function mySqlCreateProcedureName(table: string): string {
  return `${checkMySqlTableName(table)}_create_v2`;
}

/** The create procedures of earlier versions, which a migration's down step removes too. */
function earlierCreateProcedureNames(table: string): string[] {
  return [`${checkMySqlTableName(table)}_create`];
}

/**
 * Records are keyed by `scope_hash`, SHA-256 of the length-prefixed (operation, user, key), not by the
 * text itself: MySQL's collations fold case ("K" = "k") or ignore trailing spaces ("alice" =
 * "alice "), and either would let two scopes share one record. Bytes compare exactly, and the scope
 * texts can be as long as they need.
 */
const SCOPE_HASH = "BINARY(32) NOT NULL";
const SCOPE_TEXT = "TEXT CHARACTER SET utf8mb4 NOT NULL";

function createProcedure(table: string): string {
  // One round trip for a first request and for a duplicate, as the PostgreSQL function gives. Times are
  // UTC DATETIME(6) from the server's clock: no session time zone or daylight-saving step is involved.
  return `CREATE PROCEDURE ${mySqlCreateProcedureName(table)}(
  IN p_scope BINARY(32), IN p_operation TEXT CHARACTER SET utf8mb4, IN p_user_id TEXT CHARACTER SET utf8mb4,
  IN p_key TEXT CHARACTER SET utf8mb4, IN p_request_hash VARCHAR(255), IN p_token CHAR(36), IN p_ttl_us BIGINT
)
BEGIN
  DECLARE v_now DATETIME(6) DEFAULT UTC_TIMESTAMP(6);
  DECLARE v_taken BOOLEAN DEFAULT FALSE;
  DECLARE CONTINUE HANDLER FOR 1062 SET v_taken = TRUE;
  INSERT INTO ${table} (scope_hash, operation, user_id, \`key\`, request_hash, status, token, expires_at, created_at, updated_at)
  VALUES (p_scope, p_operation, p_user_id, p_key, p_request_hash, 'PROCESSING', p_token, v_now + INTERVAL p_ttl_us MICROSECOND, v_now, v_now);
  IF v_taken THEN
    -- A record past its expiry is free: the first create to flip it back to PROCESSING owns it.
    UPDATE ${table}
    SET request_hash = p_request_hash, status = 'PROCESSING', response = NULL, token = p_token,
        expires_at = v_now + INTERVAL p_ttl_us MICROSECOND, created_at = v_now, updated_at = v_now
    WHERE scope_hash = p_scope AND expires_at <= v_now;
    IF ROW_COUNT() = 0 THEN
      -- No row when it was freed since: the caller asks again.
      SELECT 0 AS created, operation, user_id, \`key\`, request_hash, status, response, token,
        TIMESTAMPDIFF(MICROSECOND, '1970-01-01', expires_at) DIV 1000 AS expires_ms,
        TIMESTAMPDIFF(MICROSECOND, '1970-01-01', updated_at) DIV 1000 AS updated_ms
      FROM ${table} WHERE scope_hash = p_scope;
    END IF;
  END IF;
END`;
}

/**
 * The DDL, one statement per entry; running them again is harmless (the procedure is replaced).
 *
 * @example
 * for (const sql of mySqlSchemaStatements()) await pool.query(sql);
 */
export function mySqlSchemaStatements(table = "idempotency_records"): string[] {
  const retries = mySqlRetryTableName(table);
  return [
    `CREATE TABLE IF NOT EXISTS ${table} (
  scope_hash    ${SCOPE_HASH},
  operation     ${SCOPE_TEXT},
  user_id       ${SCOPE_TEXT},
  \`key\`         ${SCOPE_TEXT},
  request_hash  VARCHAR(255) NOT NULL,
  status        VARCHAR(10)  NOT NULL CHECK (status IN ('PROCESSING', 'SUCCESS', 'FAILED')),
  -- LONGTEXT, not JSON: MySQL's JSON type normalises the document, and a replay must send the first bytes.
  response      LONGTEXT,
  -- Fencing token of the execution that owns the record: stale workers cannot mark or free it.
  token         CHAR(36)     NOT NULL,
  expires_at    DATETIME(6)  NOT NULL,
  created_at    DATETIME(6)  NOT NULL,
  -- Renewed by the heartbeat; recovery frees PROCESSING records that stopped renewing it.
  updated_at    DATETIME(6)  NOT NULL,
  -- The unique key that makes create atomic: one record per (operation, user, key).
  PRIMARY KEY (scope_hash),
  KEY ${table}_expires_at_idx (expires_at),
  KEY ${table}_processing_idx (status, updated_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4`,
    `CREATE TABLE IF NOT EXISTS ${retries} (
  scope_hash    ${SCOPE_HASH},
  retry_count   INT          NOT NULL,
  expires_at    DATETIME(6)  NOT NULL,
  -- Recovery points live beside the retry counter, which outlives the record a failure deletes:
  -- a JSON object (step name -> the result's JSON text) of the request hash that recorded them.
  request_hash  VARCHAR(255),
  steps         LONGTEXT,
  PRIMARY KEY (scope_hash),
  KEY ${retries}_expires_at_idx (expires_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4`,
    `DROP PROCEDURE IF EXISTS ${mySqlCreateProcedureName(table)}`,
    createProcedure(table),
  ];
}

/** The statements that remove them (a migration's down step). */
export function mySqlDropStatements(table: string): string[] {
  return [
    ...[mySqlCreateProcedureName(table), ...earlierCreateProcedureNames(table)].map(
      (name) => `DROP PROCEDURE IF EXISTS ${name}`,
    ),
    `DROP TABLE IF EXISTS ${mySqlRetryTableName(table)}`,
    `DROP TABLE IF EXISTS ${checkMySqlTableName(table)}`,
  ];
}
