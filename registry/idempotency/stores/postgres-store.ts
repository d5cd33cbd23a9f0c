// PostgresStore: the IdempotencyStore contract on PostgreSQL, through any `query(text, params)` client.
import type {
  CreateInput,
  CreateResult,
  IdempotencyRecord,
  IdempotencyScope,
  RecoveredRecord,
  RecoverInput,
} from "../types";
import type { TransactionalStore } from "../types";
import { missingFunction } from "./postgres-errors";
import { cleanupStatement, recoveredRecords, recoverStatement } from "./postgres-maintenance";
import { BUMP_COUNTER, COLUMNS, MS, postgresTimes, type Row } from "./postgres-rows";
import { parseSteps, toRecord } from "./record-row";
import {
  checkTableName,
  completeFunctionName,
  createFunctionName,
  postgresSchemaStatements,
  retryTableName,
} from "./postgres-schema";

/** What the store needs of a driver: a `pg` Pool, a PGlite instance, or anything shaped like them. */
export type SqlClient = {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
};

/**
 * A client that can also run work in one transaction: `sql` runs the store's statements inside it and
 * `tx` is the client's own transaction object (a `pg` PoolClient, a Drizzle tx, ...), handed to the
 * operation of `executeInTransaction`. Commits when `work` resolves, rolls back when it rejects.
 * The adapters in `./clients/` make one from each client.
 */
export type TransactionalSqlClient<Tx> = SqlClient & {
  transaction<T>(work: (sql: SqlClient, tx: Tx) => Promise<T>): Promise<T>;
};

export type PostgresStoreOptions = {
  /** @default "idempotency_records" (the retry counters go in `<table>_retries`) */
  table?: string | undefined;
};

const SCOPE = "operation = $1 AND user_id = $2 AND key = $3";
/** Attempts of `create` when the row it conflicted with vanished in between (released or cleaned). */
const CREATE_ATTEMPTS = 5;

/**
 * Every time comparison uses the database's `now()`, so app servers with drifting clocks agree.
 *
 * @example
 * const store = new PostgresStore(new pg.Pool({ connectionString: process.env.DATABASE_URL }));
 */
export class PostgresStore<Tx = never> implements TransactionalStore<Tx> {
  readonly table: string;
  private readonly retries: string;

  private readonly client: SqlClient | TransactionalSqlClient<Tx>;
  private readonly createFunction: string;
  private readonly completeFunction: string;
  /** Set by setLockTimeout, sent with the next create. */
  private lockTimeout: string | null = null;

  /** `client`: a `pg` Pool or PGlite as they are, or any client through its adapter in `./clients/` (needed for transactions). */
  constructor(client: SqlClient | TransactionalSqlClient<Tx>, options: PostgresStoreOptions = {}) {
    this.client = client;
    this.table = checkTableName(options.table ?? "idempotency_records");
    this.retries = retryTableName(this.table);
    this.createFunction = createFunctionName(this.table);
    this.completeFunction = completeFunctionName(this.table);
  }

  /** Creates the tables and indexes if they are missing (tests, quick starts; production uses the migration). */
  async createSchema(): Promise<void> {
    for (const statement of postgresSchemaStatements(this.table)) await this.client.query(statement);
  }

  /** Whether the client came through an adapter from `./clients/`, which gives it transactions. */
  get supportsTransactions(): boolean {
    return "transaction" in this.client;
  }

  /**
   * Runs `work` in one transaction of the client, with a store whose statements run inside it and the
   * client's own transaction object (for `executeInTransaction`).
   */
  transaction<T>(work: (store: PostgresStore<Tx>, tx: Tx) => Promise<T>): Promise<T> {
    const client = this.client;
    if (!("transaction" in client)) {
      return Promise.reject(
        new TypeError(
          "PostgresStore: this client has no transaction(); wrap it with its adapter from stores/clients/ (e.g. pgClient(pool)) to use executeInTransaction.",
        ),
      );
    }
    return client.transaction((sql, tx) => work(new PostgresStore<Tx>(sql, { table: this.table }), tx));
  }

  /**
   * Inside a transaction: how long a statement waits for a row lock (a duplicate's uncommitted record)
   * before failing. Sent with the next `create`, which sets it before its insert: no round trip of its own.
   */
  setLockTimeout(ms: number): Promise<void> {
    this.lockTimeout = `${Math.max(1, Math.round(ms))}ms`;
    return Promise.resolve();
  }

  async create({ scope, requestHash, ttlMs, token }: CreateInput): Promise<CreateResult> {
    const params = [scope.operation, scope.userId, scope.key, requestHash, token, ttlMs];
    for (let attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
      // One round trip: the schema's function inserts, or reads the row that holds the key.
      const { rows } = await this.callCreate(params);
      const row = rows[0] as (Row & { created: boolean; expired: boolean | null }) | undefined;
      if (row === undefined) continue; // The row that held the key was freed in between: ask again.
      if (row.created) return { status: "CREATED", steps: parseSteps(row.steps) };
      if (row.expired === false) return { status: "DUPLICATE", record: toRecord(row, postgresTimes) };
      if (row.expired && (await this.takeOverExpired(params))) return { status: "CREATED" };
    }
    throw new Error(
      `PostgresStore.create: the record for key "${scope.key}" kept changing; gave up after ${CREATE_ATTEMPTS} attempts.`,
    );
  }

  async get(scope: IdempotencyScope): Promise<IdempotencyRecord | undefined> {
    const { rows } = await this.client.query(
      `SELECT ${COLUMNS}, c.steps::text AS steps FROM ${this.table} r
       LEFT JOIN ${this.retries} c ON (c.operation, c.user_id, c.key) = (r.operation, r.user_id, r.key)
         AND c.request_hash = r.request_hash AND c.expires_at > now()
       WHERE r.operation = $1 AND r.user_id = $2 AND r.key = $3 AND r.expires_at > now()`,
      scopeParams(scope),
    );
    const row = rows[0] as Row | undefined;
    return row && { ...toRecord(row, postgresTimes), steps: parseSteps(row.steps) };
  }

  async markStep(
    scope: IdempotencyScope,
    token: string,
    name: string,
    result: string,
    ttlMs: number,
  ): Promise<boolean> {
    // The record's row is share-locked, so a concurrent release or recovery either waits for this
    // write or leaves nothing to select: a step is never added for a request hash that lost the key.
    return this.owned(
      `INSERT INTO ${this.retries} AS c (operation, user_id, key, retry_count, expires_at, request_hash, steps)
       SELECT operation, user_id, key, 0, now() + $7${MS}, request_hash, jsonb_build_object($5::text, $6::text)
       FROM ${this.table} WHERE ${SCOPE} AND token = $4 AND status = 'PROCESSING' AND expires_at > now()
       FOR KEY SHARE
       ON CONFLICT (operation, user_id, key) DO UPDATE SET
         steps = CASE WHEN c.request_hash = EXCLUDED.request_hash AND c.expires_at > now()
           THEN c.steps || EXCLUDED.steps ELSE EXCLUDED.steps END,
         retry_count = CASE WHEN c.expires_at > now() THEN c.retry_count ELSE 0 END,
         request_hash = EXCLUDED.request_hash, expires_at = EXCLUDED.expires_at
       RETURNING 1`,
      [...scopeParams(scope), token, name, result, ttlMs],
    );
  }

  async markSuccess(scope: IdempotencyScope, token: string, response: string | null, ttlMs: number): Promise<boolean> {
    return this.complete(scope, token, "SUCCESS", response, ttlMs);
  }

  async markFailed(
    scope: IdempotencyScope,
    token: string,
    ttlMs: number,
    response: string | null = null,
  ): Promise<boolean> {
    return this.complete(scope, token, "FAILED", response, ttlMs);
  }

  async release(scope: IdempotencyScope, token: string): Promise<boolean> {
    return this.owned(`DELETE FROM ${this.table} WHERE ${SCOPE} AND token = $4 AND status = 'PROCESSING' RETURNING 1`, [
      ...scopeParams(scope),
      token,
    ]);
  }

  async heartbeat(scope: IdempotencyScope, token: string, ttlMs = 0): Promise<boolean> {
    return this.owned(
      `UPDATE ${this.table} SET updated_at = now(), expires_at = GREATEST(expires_at, now() + $5${MS})
       WHERE ${SCOPE} AND token = $4 AND status = 'PROCESSING' RETURNING 1`,
      [...scopeParams(scope), token, ttlMs],
    );
  }

  async incrementRetryCount(scope: IdempotencyScope, ttlMs: number): Promise<number> {
    const { rows } = await this.client.query(
      `INSERT INTO ${this.retries} AS c (operation, user_id, key, retry_count, expires_at)
       VALUES ($1, $2, $3, 1, now() + $4${MS})
       ON CONFLICT (operation, user_id, key) DO UPDATE SET ${BUMP_COUNTER}
       RETURNING retry_count`,
      [...scopeParams(scope), ttlMs],
    );
    return (rows[0] as { retry_count: number }).retry_count;
  }

  /** Recovery and cleanup are one statement each: see postgres-maintenance.ts. */
  async recoverStuckRecords(input: RecoverInput): Promise<RecoveredRecord[]> {
    const { text, params } = recoverStatement(this.table, this.retries, input);
    const { rows } = await this.client.query(text, params);
    return recoveredRecords(rows);
  }

  async cleanupExpiredRecords({ limit }: { limit: number }): Promise<number> {
    const { text, params } = cleanupStatement(this.table, this.retries, limit);
    const { rows } = await this.client.query(text, params);
    return (rows[0] as { deleted: number }).deleted;
  }

  private callCreate(params: unknown[]): Promise<{ rows: unknown[] }> {
    const lockTimeout = this.lockTimeout;
    this.lockTimeout = null;
    return this.callFunction(this.createFunction, `SELECT * FROM ${this.createFunction}($1, $2, $3, $4, $5, $6, $7)`, [
      ...params,
      lockTimeout,
    ]);
  }

  private async complete(
    scope: IdempotencyScope,
    token: string,
    status: "SUCCESS" | "FAILED",
    response: string | null,
    ttlMs: number,
  ): Promise<boolean> {
    const sql = `SELECT ${this.completeFunction}($1, $2, $3, $4, $5, $6, $7) AS done`;
    const { rows } = await this.callFunction(this.completeFunction, sql, [
      ...scopeParams(scope),
      token,
      status,
      response,
      ttlMs,
    ]);
    return (rows[0] as { done: boolean }).done;
  }

  /** Calls one of the schema's functions; a database migrated before it existed gets told what to run. */
  private async callFunction(name: string, sql: string, params: unknown[]): Promise<{ rows: unknown[] }> {
    try {
      return await this.client.query(sql, params);
    } catch (err) {
      throw missingFunction(err, name, this.table) ?? err;
    }
  }

  /** A record past its expiry is free: the first create to flip it back to PROCESSING owns it. */
  private async takeOverExpired(params: unknown[]): Promise<boolean> {
    return this.owned(
      `UPDATE ${this.table}
       SET request_hash = $4, status = 'PROCESSING', response = NULL, token = $5,
           expires_at = now() + $6${MS}, created_at = now(), updated_at = now()
       WHERE ${SCOPE} AND expires_at <= now() RETURNING 1`,
      params,
    );
  }

  private async owned(sql: string, params: unknown[]): Promise<boolean> {
    const { rows } = await this.client.query(sql, params);
    return rows.length > 0;
  }
}

function scopeParams({ operation, userId, key }: IdempotencyScope): string[] {
  return [operation, userId, key];
}
