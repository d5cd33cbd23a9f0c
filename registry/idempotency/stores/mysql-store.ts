// MySqlStore: the IdempotencyStore contract on MySQL 8 and MariaDB 10.6+, through a mysql2 pool.
import type {
  CreateInput,
  CreateResult,
  IdempotencyRecord,
  IdempotencyScope,
  RecoveredRecord,
  RecoverInput,
} from "../types";
import type { TransactionalStore } from "../types";
import { parseSteps, toRecord } from "./record-row";
import { isDeadlock, isLockWaitOrDeadlock, missingProcedure } from "./mysql-errors";
import { cleanupStatements, stuckRecords, stuckStatement, takeoverStatement } from "./mysql-maintenance";
import { COLUMNS, mySqlTimes, NOW, SCOPE, scopeHash, scopeParams, type Row, type WriteResult } from "./mysql-rows";
import { recoverByTakeover, type TakeoverStore } from "./takeover-recovery";
import {
  checkMySqlTableName,
  mySqlCreateProcedureName,
  mySqlRetryTableName,
  mySqlSchemaStatements,
} from "./mysql-schema";

/**
 * What the store needs of a driver: mysql2/promise's `Pool` (or `Connection`) as it is. Results are
 * mysql2's `[rows, fields]`; for a write, `rows` is the header with `affectedRows` and `insertId`.
 */
export type MySqlClient = {
  query(sql: string, values?: unknown[]): Promise<[unknown, unknown]>;
};

/**
 * A client that can also run work in one transaction: `sql` runs the store's statements inside it and
 * `tx` is the client's own transaction object, handed to the operation of `executeInTransaction`.
 * Commits when `work` resolves, rolls back when it rejects. `mysql2Client` in `./clients/` makes one.
 */
export type TransactionalMySqlClient<Tx> = MySqlClient & {
  transaction<T>(work: (sql: MySqlClient, tx: Tx) => Promise<T>): Promise<T>;
};

export type MySqlStoreOptions = {
  /** @default "idempotency_records" (the retry counters go in `<table>_retries`) */
  table?: string | undefined;
};

/** Attempts of `create` when the row it met vanished in between, or two takers of an expired row deadlocked. */
const CREATE_ATTEMPTS = 5;

/**
 * Every time comparison uses the server's UTC clock, so app servers with drifting clocks agree.
 *
 * @example
 * import mysql from "mysql2/promise";
 * const store = new MySqlStore(mysql.createPool(process.env.MYSQL_URL!));
 */
export class MySqlStore<Tx = never> implements TransactionalStore<Tx> {
  readonly table: string;
  private readonly retries: string;
  private readonly createProcedure: string;
  private readonly client: MySqlClient | TransactionalMySqlClient<Tx>;
  /** Inside a transaction a deadlock ends the whole transaction, so create must not try again. */
  private readonly inTransaction: boolean;
  /** Set once setLockTimeout changed the session's lock wait: put back before the connection goes back. */
  private lockWaitChanged = false;

  /** `client`: a mysql2 Pool or Connection as it is, or through `mysql2Client` (needed for transactions). */
  constructor(
    client: MySqlClient | TransactionalMySqlClient<Tx>,
    options: MySqlStoreOptions = {},
    inTransaction = false,
  ) {
    this.client = client;
    this.inTransaction = inTransaction;
    this.table = checkMySqlTableName(options.table ?? "idempotency_records");
    this.retries = mySqlRetryTableName(this.table);
    this.createProcedure = mySqlCreateProcedureName(this.table);
  }

  /** Creates the tables and the procedure (tests, quick starts; production uses the migration). */
  async createSchema(): Promise<void> {
    for (const statement of mySqlSchemaStatements(this.table)) await this.client.query(statement);
  }

  /** Whether the client came through `mysql2Client`, which gives it transactions. */
  get supportsTransactions(): boolean {
    return "transaction" in this.client;
  }

  /**
   * Runs `work` in one transaction of the client, with a store whose statements run inside it and the
   * client's own transaction object (for `executeInTransaction`).
   */
  transaction<T>(work: (store: MySqlStore<Tx>, tx: Tx) => Promise<T>): Promise<T> {
    const client = this.client;
    if (!("transaction" in client)) {
      return Promise.reject(
        new TypeError(
          "MySqlStore: this client has no transaction(); wrap it with mysql2Client(pool) from stores/clients/ to use executeInTransaction.",
        ),
      );
    }
    return client.transaction(async (sql, tx) => {
      const scoped = new MySqlStore<Tx>(sql, { table: this.table }, true);
      let result: T;
      try {
        result = await work(scoped, tx);
      } catch (err) {
        await scoped.restoreLockWait().catch(() => {}); // The rollback follows; the work's own error is the one to tell.
        throw err;
      }
      await scoped.restoreLockWait();
      return result;
    });
  }

  /**
   * Inside a transaction: how long a statement waits for a row lock (a duplicate's uncommitted record)
   * before failing. InnoDB counts whole seconds, so `ms` is rounded up to at least one second.
   */
  async setLockTimeout(ms: number): Promise<void> {
    // The pool's connection outlives the transaction: keep the session's own value to put back.
    await this.client.query(
      "SET @idempotency_lock_wait = @@SESSION.innodb_lock_wait_timeout, SESSION innodb_lock_wait_timeout = ?",
      [Math.max(1, Math.ceil(ms / 1000))],
    );
    this.lockWaitChanged = true;
  }

  /** A lock wait that gave up (1205), or a deadlock between two waiters on one key (1213): another execution holds it. */
  isLockNotAvailable(err: unknown): boolean {
    return isLockWaitOrDeadlock(err);
  }

  async create({ scope, requestHash, ttlMs, token }: CreateInput): Promise<CreateResult> {
    const params = [
      scopeHash(scope),
      scope.operation,
      scope.userId,
      scope.key,
      requestHash,
      token,
      Math.round(ttlMs * 1000),
    ];
    for (let attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
      let sets: unknown;
      try {
        [sets] = await this.client.query(`CALL ${this.createProcedure}(?, ?, ?, ?, ?, ?, ?)`, params);
      } catch (err) {
        if (isDeadlock(err) && !this.inTransaction) continue;
        throw missingProcedure(err, this.createProcedure) ?? err;
      }
      // Only the CALL's OK packet (no result set): the key is ours. Its earlier attempts' steps are not read
      // here; the execution reads them with one `get` if its operation calls `step`.
      if (!Array.isArray(sets)) return { status: "CREATED" };
      const row = (sets as [Row[]])[0][0];
      if (row === undefined) continue; // The row that held the key was freed in between: ask again.
      return { status: "DUPLICATE", record: toRecord(row, mySqlTimes) };
    }
    throw new Error(
      `MySqlStore.create: the record for key "${scope.key}" kept changing; gave up after ${CREATE_ATTEMPTS} attempts.`,
    );
  }

  async get(scope: IdempotencyScope): Promise<IdempotencyRecord | undefined> {
    const [rows] = await this.client.query(
      `SELECT ${COLUMNS}, (SELECT c.steps FROM ${this.retries} c WHERE c.scope_hash = r.scope_hash
         AND c.request_hash = r.request_hash AND c.expires_at > ${NOW}) AS steps
       FROM ${this.table} r WHERE ${SCOPE} AND expires_at > ${NOW}`,
      scopeParams(scope),
    );
    const row = (rows as Row[])[0];
    return row ? { ...toRecord(row, mySqlTimes), steps: parseSteps(row.steps) } : undefined;
  }

  /** One statement: the holder's record is read and the step merged into its counter row (or replaces another request's steps). */
  markStep(scope: IdempotencyScope, token: string, name: string, result: string, ttlMs: number): Promise<boolean> {
    // Assignments run left to right and see the new values: request_hash and expires_at change last.
    return this.owned(
      `INSERT INTO ${this.retries} (scope_hash, retry_count, expires_at, request_hash, steps)
       SELECT r.scope_hash, 0, ${NOW} + INTERVAL ? MICROSECOND, r.request_hash, JSON_OBJECT(?, ?) FROM ${this.table} r
       WHERE r.scope_hash = ? AND token = ? AND status = 'PROCESSING' AND expires_at > ${NOW}
       ON DUPLICATE KEY UPDATE
         steps = IF(${this.retries}.request_hash <=> VALUES(request_hash) AND ${this.retries}.expires_at > ${NOW},
           JSON_MERGE_PATCH(${this.retries}.steps, VALUES(steps)), VALUES(steps)),
         retry_count = IF(${this.retries}.expires_at > ${NOW}, ${this.retries}.retry_count, 0),
         request_hash = VALUES(request_hash), expires_at = VALUES(expires_at)`,
      [Math.round(ttlMs * 1000), name, result, ...scopeParams(scope), token],
    );
  }

  markSuccess(scope: IdempotencyScope, token: string, response: string | null, ttlMs: number): Promise<boolean> {
    return this.complete(scope, token, "SUCCESS", response, ttlMs);
  }

  markFailed(scope: IdempotencyScope, token: string, ttlMs: number, response: string | null = null): Promise<boolean> {
    return this.complete(scope, token, "FAILED", response, ttlMs);
  }

  release(scope: IdempotencyScope, token: string): Promise<boolean> {
    return this.owned(`DELETE FROM ${this.table} WHERE ${SCOPE} AND token = ? AND status = 'PROCESSING'`, [
      ...scopeParams(scope),
      token,
    ]);
  }

  heartbeat(scope: IdempotencyScope, token: string, ttlMs = 0): Promise<boolean> {
    // updated_at always moves, even twice in one microsecond: a server that reports changed rows only
    // (no CLIENT_FOUND_ROWS) would otherwise count a live lease as lost.
    return this.owned(
      `UPDATE ${this.table}
       SET updated_at = GREATEST(${NOW}, updated_at + INTERVAL 1 MICROSECOND),
           expires_at = GREATEST(expires_at, ${NOW} + INTERVAL ? MICROSECOND)
       WHERE ${SCOPE} AND token = ? AND status = 'PROCESSING'`,
      [Math.round(ttlMs * 1000), ...scopeParams(scope), token],
    );
  }

  async incrementRetryCount(scope: IdempotencyScope, ttlMs: number): Promise<number> {
    // LAST_INSERT_ID(expr) hands the new count back in the write's own answer: one round trip.
    const [result] = await this.client.query(
      `INSERT INTO ${this.retries} (scope_hash, retry_count, expires_at)
       VALUES (?, LAST_INSERT_ID(1), ${NOW} + INTERVAL ? MICROSECOND)
       ON DUPLICATE KEY UPDATE
         retry_count = LAST_INSERT_ID(IF(expires_at <= ${NOW}, 1, retry_count + 1)),
         steps = IF(expires_at <= ${NOW}, NULL, steps),
         expires_at = ${NOW} + INTERVAL ? MICROSECOND`,
      [...scopeParams(scope), Math.round(ttlMs * 1000), Math.round(ttlMs * 1000)],
    );
    return Number((result as WriteResult).insertId);
  }

  async recoverStuckRecords(input: RecoverInput): Promise<RecoveredRecord[]> {
    const { sql, values } = stuckStatement(this.table, input);
    const [rows] = await this.client.query(sql, values);
    return recoverByTakeover(this.takeover, stuckRecords(rows), input);
  }

  /** Recovery's takeover, fenced like every mark: see takeover-recovery.ts. */
  private readonly takeover: TakeoverStore = {
    takeOver: (stuck, recovery, olderThanMs) => {
      const { sql, values } = takeoverStatement(this.table, stuck, recovery, olderThanMs);
      return this.owned(sql, values);
    },
    incrementRetryCount: (scope, ttlMs) => this.incrementRetryCount(scope, ttlMs),
    markFailed: (scope, token, ttlMs) => this.markFailed(scope, token, ttlMs),
    release: (scope, token) => this.release(scope, token),
  };

  async cleanupExpiredRecords({ limit }: { limit: number }): Promise<number> {
    const [records, counters] = cleanupStatements(this.table, this.retries, limit);
    const [deleted] = await this.client.query(records.sql, records.values);
    await this.client.query(counters.sql, counters.values);
    return (deleted as WriteResult).affectedRows;
  }

  private complete(
    scope: IdempotencyScope,
    token: string,
    status: "SUCCESS" | "FAILED",
    response: string | null,
    ttlMs: number,
  ): Promise<boolean> {
    return this.owned(
      `UPDATE ${this.table} SET status = ?, response = ?, updated_at = ${NOW}, expires_at = ${NOW} + INTERVAL ? MICROSECOND
       WHERE ${SCOPE} AND token = ? AND status = 'PROCESSING'`,
      [status, response, Math.round(ttlMs * 1000), ...scopeParams(scope), token],
    );
  }

  private async restoreLockWait(): Promise<void> {
    if (!this.lockWaitChanged) return;
    this.lockWaitChanged = false;
    await this.client.query("SET SESSION innodb_lock_wait_timeout = @idempotency_lock_wait");
  }

  private async owned(sql: string, params: unknown[]): Promise<boolean> {
    const [result] = await this.client.query(sql, params);
    return (result as WriteResult).affectedRows > 0;
  }
}
