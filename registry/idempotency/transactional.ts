// executeInTransaction: the record, the operation's writes and the stored result commit in one database transaction.
import { randomUUID } from "node:crypto";
import { IdempotencyError } from "./errors";
import type { ExecuteResult } from "./handler";
import type { BoundedStore } from "./bounded-store";
import { classifies, keptFailureResponse } from "./execution";
import type { Observer } from "./observer";
import type { TransactionContext } from "./operation-context";
import { freshResult, serializeResult, UnstorableResultError } from "./result-json";
import type { CachedRecord, IdempotencyRecord, IdempotencyScope, IdempotencyStore } from "./types";
import { TimeoutError } from "./utils/with-timeout";

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

/** The operation gets its context: `ctx.tx`, the client's own transaction object, and `ctx.signal`, which aborts when `timeoutMs` passes. */
export type TransactionalOperation<T, Tx> = (ctx: TransactionContext<Tx>) => Promise<T> | T;

export type TransactionOptions = {
  /** True when the error can never succeed on retry: the writes roll back and the key is recorded FAILED. */
  isPermanentError?: ((err: unknown) => boolean) | undefined;
  /** How long a duplicate waits for the first request's transaction, then replays or gets REQUEST_IN_PROGRESS. @default 2_000 */
  lockTimeoutMs?: number | undefined;
  /** Gives up on an operation running longer than this: its signal aborts and its writes roll back. @default no limit */
  timeoutMs?: number | undefined;
  /** What to keep with a key a permanent error marks FAILED, as with `execute`. @default nothing is kept */
  failureResponse?: ((err: unknown) => unknown) | undefined;
};

/** What the handler lends this module: its bounded store, settings, observer, cache and duplicate answers. */
export type TransactionalCore = {
  store: BoundedStore;
  observer: Observer;
  settings: { ttlMs: number; maxRetries: number; storeTimeoutMs: number };
  readCache(scope: IdempotencyScope): Promise<CachedRecord | undefined>;
  writeCache(scope: IdempotencyScope, record: CachedRecord, ttlMs: number): Promise<void>;
  answerDuplicate<T>(scope: IdempotencyScope, record: CachedRecord | IdempotencyRecord, requestHash: string, source: "cache" | "store"): ExecuteResult<T>;
};

const DEFAULT_LOCK_TIMEOUT_MS = 2_000;

/** Carries the operation's own error out of the transaction, so the rollback is told apart from a store failure. */
class OperationFailed extends Error {
  readonly error: unknown;
  readonly permanent: boolean;

  constructor(error: unknown, permanent: boolean) {
    super("the operation failed inside its transaction");
    this.error = error;
    this.permanent = permanent;
  }
}

type Outcome = { duplicate: IdempotencyRecord } | { serialized: string | null };

/**
 * One transaction: lock the key by inserting its record, run the operation on the same transaction,
 * store the result, commit. A duplicate's insert blocks on the uncommitted record's primary key for at
 * most `lockTimeoutMs`: then it sees the committed result (replay), the freed key (it runs), or gives
 * up with REQUEST_IN_PROGRESS. Any failure before the commit leaves neither the record nor the writes.
 */
export async function executeInTransaction<T, Tx>(
  core: TransactionalCore,
  scope: IdempotencyScope,
  requestHash: string,
  operation: TransactionalOperation<T, Tx>,
  options: TransactionOptions = {},
): Promise<ExecuteResult<T>> {
  const store = transactional<Tx>(core.store.store);
  const cached = await core.readCache(scope);
  if (cached) return core.answerDuplicate<T>(scope, cached, requestHash, "cache");

  const { observer, settings } = core;
  const lockTimeoutMs = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const token = randomUUID();
  const deadline = new Deadline();
  let ran = false;
  let started = 0;
  let outcome: Outcome;
  try {
    // Bounds the time to get a connection, BEGIN and the insert (with its lock wait), as `execute` bounds create.
    deadline.start(settings.storeTimeoutMs + lockTimeoutMs, "store.create");
    outcome = await deadline.race(
      store.transaction(async (txStore, tx): Promise<Outcome> => {
        await txStore.setLockTimeout(lockTimeoutMs);
        const created = await txStore.create({ scope, requestHash, ttlMs: settings.ttlMs, token });
        deadline.check(); // The caller was already answered STORE_UNAVAILABLE: never run the operation now.
        if (created.status === "DUPLICATE") return { duplicate: created.record };
        ran = true;
        started = performance.now();
        const ctx = new TransactionRun(scope, tx);
        deadline.start(options.timeoutMs ?? Infinity, "the operation", ctx);
        let serialized: string | null;
        try {
          serialized = serializeResult(await operation(ctx));
          deadline.check();
        } catch (err) {
          throw new OperationFailed(err, isPermanent(observer, scope, options, err));
        }
        deadline.start(settings.storeTimeoutMs, "store.markSuccess and commit");
        if (!(await txStore.markSuccess(scope, token, serialized, settings.ttlMs))) {
          throw new Error("idempotency: the record vanished inside its own transaction");
        }
        return { serialized };
      }),
    );
  } catch (err) {
    deadline.stop();
    if (err instanceof OperationFailed) {
      const failure = err.error instanceof UnstorableResultError ? err.error.cause : err.error;
      const kept = keptFailureResponse(observer, scope, err.error, options.failureResponse);
      const result = await settleRolledBack(core, store, scope, requestHash, lockTimeoutMs, failure, err.permanent, kept);
      observer.duration(scope.operation, result, (performance.now() - started) / 1000);
      throw err.error;
    }
    if (sqlState(err) === LOCK_NOT_AVAILABLE || store.isLockNotAvailable?.(err) === true) {
      observer.record("rejectedInProgressLocked", scope);
      throw new IdempotencyError("REQUEST_IN_PROGRESS", "A request with this Idempotency-Key is still being processed; retry later.", {
        retryAfterSeconds: Math.max(1, Math.ceil(lockTimeoutMs / 1000)),
      });
    }
    core.store.failed("transaction");
    observer.record("storeUnavailable", scope, { method: "transaction", ran, err });
    throw new IdempotencyError(
      "STORE_UNAVAILABLE",
      ran
        ? "The database did not confirm the transaction; retry with the same key: it replays if the transaction committed, and runs if it did not."
        : "The idempotency store is unavailable; the request was not executed. Retry later.",
      { cause: err },
    );
  }
  deadline.stop();

  if ("duplicate" in outcome) {
    const record = outcome.duplicate;
    if (record.status !== "PROCESSING" && record.requestHash === requestHash) {
      await core.writeCache(scope, { requestHash, status: record.status, response: record.response }, record.expiresAt.getTime() - Date.now());
    }
    return core.answerDuplicate<T>(scope, record, requestHash, "store");
  }
  observer.duration(scope.operation, "success", (performance.now() - started) / 1000);
  observer.record("committed", scope);
  await core.writeCache(scope, { requestHash, status: "SUCCESS", response: outcome.serialized }, settings.ttlMs);
  return freshResult<T>(outcome.serialized);
}

/**
 * After the rollback: a permanent error records the key FAILED (in a short transaction of its own);
 * a transient one counts a retry and leaves the key free, or records it FAILED once the budget is
 * spent. If the store cannot be written, the key simply stays free: nothing of the operation remains.
 */
async function settleRolledBack(
  core: TransactionalCore,
  store: TransactionalStore<unknown>,
  scope: IdempotencyScope,
  requestHash: string,
  lockTimeoutMs: number,
  err: unknown,
  permanent: boolean,
  kept: string | null,
): Promise<string> {
  const { observer, settings } = core;
  try {
    if (permanent) {
      await recordFailed(core, store, scope, requestHash, lockTimeoutMs, kept);
      observer.record("rolledBackPermanentFailure", scope, { err });
      return "permanent_failure";
    }
    const retryCount = await core.store.call("incrementRetryCount", (bounded) => bounded.incrementRetryCount(scope, settings.ttlMs));
    if (retryCount >= settings.maxRetries) {
      await recordFailed(core, store, scope, requestHash, lockTimeoutMs, kept);
      observer.record("rolledBackPoisoned", scope, { retryCount, err });
      return "poisoned";
    }
    observer.record("rolledBackTransientFailure", scope, { retryCount, err });
    return "transient_failure";
  } catch (storeErr) {
    observer.record("rolledBackFailureNotRecorded", scope, { err: storeErr });
    return permanent ? "permanent_failure" : "transient_failure";
  }
}

/** Records the key FAILED: create and mark in one short transaction, unless another execution holds the key now. */
async function recordFailed(core: TransactionalCore, store: TransactionalStore<unknown>, scope: IdempotencyScope, requestHash: string, lockTimeoutMs: number, kept: string | null) {
  const { ttlMs, storeTimeoutMs } = core.settings;
  const token = randomUUID();
  const recording = () => {
    const work = store.transaction(async (txStore) => {
      await txStore.setLockTimeout(lockTimeoutMs);
      const created = await txStore.create({ scope, requestHash, ttlMs, token });
      if (created.status === "CREATED") await txStore.markFailed(scope, token, ttlMs, kept);
    });
    work.catch(() => {}); // Settles after we gave up: its rollback is the client's business now.
    return work;
  };
  await core.store.call("markFailed", recording, storeTimeoutMs + lockTimeoutMs);
}

/** The operation's context inside its transaction; its signal is made only if read (or when it must abort). */
class TransactionRun<Tx> implements TransactionContext<Tx> {
  readonly key: IdempotencyScope;
  readonly tx: Tx;
  private controller: AbortController | undefined;

  constructor(key: IdempotencyScope, tx: Tx) {
    this.key = key;
    this.tx = tx;
  }

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    return this.controller.signal;
  }

  abort(reason: Error): void {
    this.controller ??= new AbortController();
    this.controller.abort(reason);
  }
}

/**
 * One timer at a time over the steps of a transaction. When it fires, `race` rejects at once (the
 * transaction's rollback may wait for a dead connection) and `check` stops the work inside it.
 */
class Deadline {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private expired: TimeoutError | undefined;
  private reject: ((err: TimeoutError) => void) | undefined;
  private readonly fired = new Promise<never>((_, reject) => (this.reject = reject));

  constructor() {
    this.fired.catch(() => {});
  }

  start(ms: number, what: string, running?: TransactionRun<unknown>): void {
    this.stop();
    if (ms === Infinity) return;
    this.timer = setTimeout(() => {
      this.expired = new TimeoutError(`${what} did not finish within ${ms} ms`);
      running?.abort(this.expired);
      this.reject?.(this.expired);
    }, ms);
    this.timer.unref?.();
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  check(): void {
    if (this.expired) throw this.expired;
  }

  race<T>(work: Promise<T>): Promise<T> {
    work.catch(() => {}); // Settles after we gave up: its rollback is the client's business now.
    return Promise.race([work, this.fired]);
  }
}

function transactional<Tx>(store: IdempotencyStore): TransactionalStore<Tx> {
  if (typeof (store as Partial<TransactionalStore<Tx>>).transaction !== "function") {
    throw new TypeError("idempotency: executeInTransaction needs a PostgresStore, MySqlStore or SqliteStore on a client adapter from stores/clients/ (e.g. new PostgresStore(pgClient(pool))).");
  }
  return store as TransactionalStore<Tx>;
}

function isPermanent(observer: Observer, scope: IdempotencyScope, options: TransactionOptions, err: unknown): boolean {
  return err instanceof UnstorableResultError || classifies(observer, scope, err, "isPermanentError", options.isPermanentError);
}

const LOCK_NOT_AVAILABLE = "55P03";

/** The SQLSTATE of a driver error, wherever the client put it. */
export function sqlState(err: unknown, depth = 0): string | undefined {
  if (typeof err !== "object" || err === null || depth > 4) return undefined;
  const { code, originalCode, cause, meta, driverAdapterError } = err as Record<string, unknown>;
  // The driver's own error sits deepest: an ORM's wrapper may carry a code of its own (Prisma's "P2010",
  // whose driver error is at `meta.driverAdapterError.cause`; Drizzle's is at `cause`).
  const own = [originalCode, code].find((candidate) => typeof candidate === "string" && /^[0-9A-Z]{5}$/.test(candidate)) as string | undefined;
  return sqlState(cause, depth + 1) ?? sqlState(meta, depth + 1) ?? sqlState(driverAdapterError, depth + 1) ?? own;
}
