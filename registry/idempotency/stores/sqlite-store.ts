// SqliteStore: the IdempotencyStore contract on SQLite, through better-sqlite3 or libSQL (Turso).
import type {
  CreateInput,
  CreateResult,
  IdempotencyRecord,
  IdempotencyScope,
  RecoveredRecord,
  RecoverInput,
} from "../types";
import type { TransactionalStore } from "../types";
import { parseSteps, toRecord, type RecordRow, type RecordTimes } from "./record-row";
import { recoverByTakeover, type TakeoverStore } from "./takeover-recovery";
import { checkSqliteTableName, sqliteRetryTableName, sqliteSchemaStatements } from "./sqlite-schema";

export type SqliteValue = string | number | null;
export type SqliteStatement = { sql: string; args: SqliteValue[] };
/** A statement's rows (for a query or `RETURNING`) and how many rows it changed. */
export type SqliteResult = { rows: Array<Record<string, unknown>>; changes: number };

/** What the store needs of a driver; `stores/clients/better-sqlite3.ts` and `libsql.ts` make one. */
export type SqliteClient = {
  execute(statement: SqliteStatement): Promise<SqliteResult>;
  /** Runs the statements in order in one write transaction (one round trip on a remote libSQL). */
  batch(statements: SqliteStatement[]): Promise<SqliteResult[]>;
};

/**
 * A client that can also run work in one write transaction: `client` runs the store's statements inside
 * it and `tx` is the driver's own transaction object, handed to the operation of `executeInTransaction`.
 * Commits when `work` resolves, rolls back when it rejects.
 */
export type TransactionalSqliteClient<Tx> = SqliteClient & {
  transaction<T>(work: (client: SqliteClient, tx: Tx) => Promise<T>): Promise<T>;
};

export type SqliteStoreOptions = {
  /** @default "idempotency_records" (the retry counters go in `<table>_retries`) */
  table?: string | undefined;
};

type Row = RecordRow & {
  expires_at: number;
  updated_at: number;
  steps?: string | null;
};

/** The database's clock in integer milliseconds ('now' is one value for the whole statement). */
const NOW = "CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER)";
const SCOPE = "operation = ? AND user_id = ? AND key = ?";
const COLUMNS = "operation, user_id, key, request_hash, status, response, token, expires_at, updated_at";

/**
 * better-sqlite3 is one process's database; libSQL (Turso) is shared by every app server, and all
 * times come from its clock.
 *
 * @example
 * const store = new SqliteStore(betterSqlite3Client(new Database("idempotency.db")));
 */
export class SqliteStore<Tx = never> implements TransactionalStore<Tx> {
  readonly table: string;
  private readonly retries: string;
  private readonly client: SqliteClient | TransactionalSqliteClient<Tx>;

  constructor(client: SqliteClient | TransactionalSqliteClient<Tx>, options: SqliteStoreOptions = {}) {
    this.client = client;
    this.table = checkSqliteTableName(options.table ?? "idempotency_records");
    this.retries = sqliteRetryTableName(this.table);
  }

  /** Creates the tables and indexes if they are missing (tests, quick starts; production uses the migration). */
  async createSchema(): Promise<void> {
    for (const sql of sqliteSchemaStatements(this.table)) await this.client.execute({ sql, args: [] });
  }

  /** Whether the client's adapter gives it transactions (both in `./clients/` do). */
  get supportsTransactions(): boolean {
    return "transaction" in this.client;
  }

  /**
   * Runs `work` in one write transaction of the client, with a store whose statements run inside it
   * and the driver's own transaction object (for `executeInTransaction`).
   */
  transaction<T>(work: (store: SqliteStore<Tx>, tx: Tx) => Promise<T>): Promise<T> {
    const client = this.client;
    if (!("transaction" in client)) {
      return Promise.reject(
        new TypeError(
          "SqliteStore: this client has no transaction(); build it with betterSqlite3Client(db) or libsqlClient(client) from stores/clients/.",
        ),
      );
    }
    return client.transaction((inside, tx) => work(new SqliteStore<Tx>(inside, { table: this.table }), tx));
  }

  /**
   * Nothing to set: SQLite has one writer, and the transaction took the write lock when it began
   * (better-sqlite3: behind the transactions before it in this process; libSQL: within the
   * connection's busy timeout), so a duplicate has already waited for the first request's commit.
   */
  setLockTimeout(): Promise<void> {
    return Promise.resolve();
  }

  /** SQLITE_BUSY: another connection kept the write lock past the busy timeout. */
  isLockNotAvailable(err: unknown): boolean {
    const code = typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
    return typeof code === "string" && code.startsWith("SQLITE_BUSY");
  }

  async create({ scope, requestHash, ttlMs, token }: CreateInput): Promise<CreateResult> {
    // One transaction: insert, or take over a record past its expiry; then read whichever holds the key.
    const [, read, steps] = await this.client.batch([
      {
        sql: `INSERT INTO ${this.table} (operation, user_id, key, request_hash, status, token, expires_at, created_at, updated_at)
              VALUES (?, ?, ?, ?, 'PROCESSING', ?, ${NOW} + ?, ${NOW}, ${NOW})
              ON CONFLICT (operation, user_id, key) DO UPDATE SET
                request_hash = excluded.request_hash, status = 'PROCESSING', response = NULL, token = excluded.token,
                expires_at = excluded.expires_at, created_at = excluded.created_at, updated_at = excluded.updated_at
              WHERE ${this.table}.expires_at <= ${NOW}`,
        args: [...scopeArgs(scope), requestHash, token, Math.round(ttlMs)],
      },
      { sql: `SELECT ${COLUMNS} FROM ${this.table} WHERE ${SCOPE}`, args: scopeArgs(scope) },
      // The steps earlier attempts of this request recorded, used only if the key is ours.
      {
        sql: `SELECT steps FROM ${this.retries} WHERE ${SCOPE} AND request_hash = ? AND expires_at > ${NOW}`,
        args: [...scopeArgs(scope), requestHash],
      },
    ]);
    const row = read?.rows[0] as Row | undefined;
    if (row === undefined)
      throw new Error(`SqliteStore.create: the record for key "${scope.key}" was not readable after its insert.`);
    if (row.token !== token) return { status: "DUPLICATE", record: toRecord(row, sqliteTimes) };
    return { status: "CREATED", steps: parseSteps((steps?.rows[0] as { steps?: string | null } | undefined)?.steps) };
  }

  async get(scope: IdempotencyScope): Promise<IdempotencyRecord | undefined> {
    const { rows } = await this.client.execute({
      sql: `SELECT ${COLUMNS.replace(/(\w+)/g, "r.$1")}, c.steps FROM ${this.table} r
            LEFT JOIN ${this.retries} c ON c.operation = r.operation AND c.user_id = r.user_id AND c.key = r.key
              AND c.request_hash = r.request_hash AND c.expires_at > ${NOW}
            WHERE r.operation = ? AND r.user_id = ? AND r.key = ? AND r.expires_at > ${NOW}`,
      args: scopeArgs(scope),
    });
    const row = rows[0] as Row | undefined;
    return row ? { ...toRecord(row, sqliteTimes), steps: parseSteps(row.steps) } : undefined;
  }

  /** One statement: the holder's record is read and the step merged into its counter row (or replaces another request's steps). */
  markStep(scope: IdempotencyScope, token: string, name: string, result: string, ttlMs: number): Promise<boolean> {
    const retries = this.retries;
    return this.owned(
      `INSERT INTO ${retries} (operation, user_id, key, retry_count, expires_at, request_hash, steps)
       SELECT operation, user_id, key, 0, ${NOW} + ?, request_hash, json_object(?, ?) FROM ${this.table}
       WHERE ${SCOPE} AND token = ? AND status = 'PROCESSING' AND expires_at > ${NOW}
       ON CONFLICT (operation, user_id, key) DO UPDATE SET
         steps = CASE WHEN ${retries}.request_hash = excluded.request_hash AND ${retries}.expires_at > ${NOW}
           THEN json_patch(${retries}.steps, excluded.steps) ELSE excluded.steps END,
         retry_count = CASE WHEN ${retries}.expires_at > ${NOW} THEN ${retries}.retry_count ELSE 0 END,
         request_hash = excluded.request_hash, expires_at = excluded.expires_at`,
      [Math.round(ttlMs), name, result, ...scopeArgs(scope), token],
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
      ...scopeArgs(scope),
      token,
    ]);
  }

  heartbeat(scope: IdempotencyScope, token: string, ttlMs = 0): Promise<boolean> {
    return this.owned(
      `UPDATE ${this.table} SET updated_at = ${NOW}, expires_at = MAX(expires_at, ${NOW} + ?)
       WHERE ${SCOPE} AND token = ? AND status = 'PROCESSING'`,
      [Math.round(ttlMs), ...scopeArgs(scope), token],
    );
  }

  async incrementRetryCount(scope: IdempotencyScope, ttlMs: number): Promise<number> {
    const { rows } = await this.client.execute({
      sql: `INSERT INTO ${this.retries} (operation, user_id, key, retry_count, expires_at) VALUES (?, ?, ?, 1, ${NOW} + ?)
            ON CONFLICT (operation, user_id, key) DO UPDATE SET
              retry_count = CASE WHEN ${this.retries}.expires_at <= ${NOW} THEN 1 ELSE ${this.retries}.retry_count + 1 END,
              steps = CASE WHEN ${this.retries}.expires_at <= ${NOW} THEN NULL ELSE ${this.retries}.steps END,
              expires_at = excluded.expires_at
            RETURNING retry_count`,
      args: [...scopeArgs(scope), Math.round(ttlMs)],
    });
    return Number((rows[0] as { retry_count: number }).retry_count);
  }

  async recoverStuckRecords(input: RecoverInput): Promise<RecoveredRecord[]> {
    const { rows } = await this.client.execute({
      sql: `SELECT operation, user_id, key, token FROM ${this.table}
            WHERE status = 'PROCESSING' AND updated_at < ${NOW} - ? ORDER BY updated_at LIMIT ?`,
      args: [Math.round(input.olderThanMs), input.limit],
    });
    const stuck = (rows as Array<Pick<Row, "operation" | "user_id" | "key" | "token">>).map((row) => ({
      operation: row.operation,
      userId: row.user_id,
      key: row.key,
      token: row.token,
    }));
    return recoverByTakeover(this.takeover, stuck, input);
  }

  /** Recovery's takeover, fenced like every mark: see takeover-recovery.ts. */
  private readonly takeover: TakeoverStore = {
    takeOver: (stuck, recovery, olderThanMs) =>
      this.owned(
        `UPDATE ${this.table} SET token = ?, updated_at = ${NOW} WHERE ${SCOPE} AND token = ? AND status = 'PROCESSING' AND updated_at < ${NOW} - ?`,
        [recovery, ...scopeArgs(stuck), stuck.token, Math.round(olderThanMs)],
      ),
    incrementRetryCount: (scope, ttlMs) => this.incrementRetryCount(scope, ttlMs),
    markFailed: (scope, token, ttlMs) => this.markFailed(scope, token, ttlMs),
    release: (scope, token) => this.release(scope, token),
  };

  async cleanupExpiredRecords({ limit }: { limit: number }): Promise<number> {
    const expired = (table: string) => ({
      sql: `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE expires_at <= ${NOW} ORDER BY expires_at LIMIT ?)`,
      args: [limit],
    });
    const [records] = await this.client.batch([expired(this.table), expired(this.retries)]);
    return records?.changes ?? 0;
  }

  private complete(
    scope: IdempotencyScope,
    token: string,
    status: "SUCCESS" | "FAILED",
    response: string | null,
    ttlMs: number,
  ): Promise<boolean> {
    return this.owned(
      `UPDATE ${this.table} SET status = ?, response = ?, updated_at = ${NOW}, expires_at = ${NOW} + ?
       WHERE ${SCOPE} AND token = ? AND status = 'PROCESSING'`,
      [status, response, Math.round(ttlMs), ...scopeArgs(scope), token],
    );
  }

  private async owned(sql: string, args: SqliteValue[]): Promise<boolean> {
    const { changes } = await this.client.execute({ sql, args });
    return changes > 0;
  }
}

function scopeArgs({ operation, userId, key }: IdempotencyScope): string[] {
  return [operation, userId, key];
}

/** SQLite keeps both timestamps as integer epoch milliseconds. */
function sqliteTimes(row: Row): RecordTimes {
  return { expiresAt: new Date(Number(row.expires_at)), updatedAt: new Date(Number(row.updated_at)) };
}
