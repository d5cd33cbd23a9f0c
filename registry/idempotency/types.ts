// The shapes shared by the handler, the stores and the caches: scopes, records, results and the contracts.

/** The lifecycle of one idempotency record. */
export const RecordStatus = {
  PROCESSING: "PROCESSING",
  SUCCESS: "SUCCESS",
  FAILED: "FAILED",
} as const;
export type RecordStatus = (typeof RecordStatus)[keyof typeof RecordStatus];

/** A key is unique only inside its scope: the same key for another user or operation is independent. */
export type IdempotencyScope = {
  operation: string;
  userId: string;
  key: string;
};

/** What a store keeps per scope. `response` is the serialized result, kept as text so its bytes survive. */
export type IdempotencyRecord = IdempotencyScope & {
  requestHash: string;
  status: RecordStatus;
  response: string | null;
  /** The fencing token of the execution that owns (or owned) the record. */
  token: string;
  expiresAt: Date;
  /** Last sign of life of the owning execution; recovery compares it with its timeout. */
  updatedAt: Date;
  /** The recovery points this key's executions completed under `requestHash` (see `markStep`). */
  steps?: StepResults;
};

/** Completed recovery points: step name -> the step's result as JSON text. */
export type StepResults = Readonly<Record<string, string>>;

export type CreateInput = {
  scope: IdempotencyScope;
  requestHash: string;
  ttlMs: number;
  /**
   * The fencing token (a UUID) the record gets if this call creates it. The caller picks it, so it
   * can still free a record whose insert committed but whose answer never reached it.
   */
  token: string;
};

/**
 * `CREATED`: the record is the caller's, under the token it passed; only the holder of that token
 * may mark, release or heartbeat it. `DUPLICATE` returns the live record that won, so a replay
 * costs one round trip.
 */
export type CreateResult =
  | {
      status: "CREATED";
      /**
       * The steps earlier attempts of this key completed under the same request hash, read in the
       * same round trip; `undefined` when the store did not read them (the execution then reads them
       * with one `get` when its operation first calls `step`).
       */
      steps?: StepResults;
    }
  | { status: "DUPLICATE"; record: IdempotencyRecord };

export type RecoverInput = {
  /** PROCESSING records whose last heartbeat is older than this are treated as crashed. */
  olderThanMs: number;
  limit: number;
  /** A recovery counts against the retry budget; at this many the key is poisoned instead of freed. */
  maxRetries: number;
  /** Lifetime of the retry counter and of a poisoned record. */
  ttlMs: number;
};

export type RecoveredRecord = IdempotencyScope & { retryCount: number; poisoned: boolean };

/**
 * Where records live. The guarantees every implementation must give (see the contract tests):
 * 1. `create` is atomic: two concurrent creates for one scope never both see CREATED.
 *    A record past its `expiresAt` counts as absent.
 * 2. The retry counter outlives `release` and expires `ttlMs` after its last increment.
 * 3. `markSuccess`, `markFailed`, `release` and `heartbeat` only act on a PROCESSING record
 *    held by `token`, and return false otherwise.
 * 4. Maintenance touches at most `limit` rows per call, through an index.
 * 5. `markStep` records a step's result only for a PROCESSING record held by `token` (false
 *    otherwise). Steps live beside the retry counter, so they outlive `release` and recovery, and
 *    expire `ttlMs` after their last write. They belong to the request hash they were recorded
 *    under: `get` and a CREATED `create` return only the steps of their own request hash, and a
 *    `markStep` under another hash replaces them, so one payload's steps never replay to another.
 */
export interface IdempotencyStore {
  /**
   * Where the records live (a table name, a key prefix). A shared cache namespaces its keys with
   * it, so two stores never answer from each other's entries; a store without one gets a
   * namespace of its own per handler.
   */
  readonly table?: string | undefined;
  create(input: CreateInput): Promise<CreateResult>;
  /** The live (unexpired) record of a scope, if any. */
  get(scope: IdempotencyScope): Promise<IdempotencyRecord | undefined>;
  markSuccess(scope: IdempotencyScope, token: string, response: string | null, ttlMs: number): Promise<boolean>;
  /** `response`: what the failed execution answered (serialized), kept so retries can be told or replayed it. */
  markFailed(scope: IdempotencyScope, token: string, ttlMs: number, response?: string | null): Promise<boolean>;
  /** Deletes the record so the client's next retry executes again. */
  release(scope: IdempotencyScope, token: string): Promise<boolean>;
  /** Records one completed step of the execution holding `token` (guarantee 5). */
  markStep(scope: IdempotencyScope, token: string, name: string, result: string, ttlMs: number): Promise<boolean>;
  /** Adds one to the scope's retry counter and returns the new count. */
  incrementRetryCount(scope: IdempotencyScope, ttlMs: number): Promise<number>;
  /**
   * Renews the lease of a running execution, and with `ttlMs` keeps its record from expiring for at
   * least that long: a live execution that outlasts the TTL must not hand its key to a duplicate.
   */
  heartbeat(scope: IdempotencyScope, token: string, ttlMs?: number): Promise<boolean>;
  recoverStuckRecords(input: RecoverInput): Promise<RecoveredRecord[]>;
  /** Deletes expired records and expired retry counters; returns how many records it deleted. */
  cleanupExpiredRecords(input: { limit: number }): Promise<number>;
}

/** A store bound to one open transaction. */
export interface TransactionScopedStore extends IdempotencyStore {
  /** How long a statement of this transaction waits for a row lock before failing with SQLSTATE 55P03 (or `isLockNotAvailable`). */
  setLockTimeout(ms: number): Promise<void>;
}

/** A store that can run work in one transaction of the user's client, handing over its transaction object `Tx`. */
export interface TransactionalStore<Tx> extends IdempotencyStore {
  /** False when this store's client cannot open a transaction (a PostgresStore on a bare Pool), so routes refuse `transaction: true` at start-up. */
  readonly supportsTransactions?: boolean;
  transaction<T>(work: (store: TransactionScopedStore, tx: Tx) => Promise<T>): Promise<T>;
  /** True for the driver's error of a lock wait that gave up, when it carries no SQLSTATE 55P03 (MySQL's 1205, SQLite's BUSY). */
  isLockNotAvailable?(err: unknown): boolean;
}

/** `response` is the operation's result as JSON would carry it, identical on the first run and on replays. */
export type ExecuteResult<T> = { response: T; replayed: boolean };

/** A completed record as a cache holds it: never PROCESSING, never the fencing token. */
export type CachedRecord = {
  requestHash: string;
  status: typeof RecordStatus.SUCCESS | typeof RecordStatus.FAILED;
  response: string | null;
};

/** A scope as the cache sees it: `namespace` names the store (its table), so stores sharing a cache stay apart. */
export type CacheScope = IdempotencyScope & { namespace: string };

/**
 * A read-through cache of completed records. Errors may be thrown; the handler swallows them, and
 * checks what `get` returns before using it (anything that is not a CachedRecord is a miss).
 */
export interface IdempotencyCache {
  get(scope: CacheScope): Promise<unknown>;
  set(scope: CacheScope, record: CachedRecord, ttlMs: number): Promise<void>;
}
