// executeInTransaction: the record, the operation's writes and the stored result commit in one database transaction.
import { randomUUID } from "node:crypto";
import type { BoundedStore } from "./bounded-store";
import {
  classifyFailure,
  keptFailureResponse,
  ROLLED_BACK,
  settleFailure,
  type FailureKind,
  type FailureOutcome,
  type RunReport,
} from "./failure-policy";
import type { Observer } from "./observer";
import type { TransactionContext, TransactionalOperation } from "./operation-context";
import type { ReadSide } from "./read-side";
import { requestInProgress, storeUnavailable } from "./refusals";
import { freshResult, serializeResult, UnstorableResultError } from "./result-json";
import type { ExecuteResult, IdempotencyRecord, IdempotencyScope, IdempotencyStore, TransactionalStore } from "./types";
import { UnkeptAnswer, unkeptFailure } from "./unkept-answer";
import { TimeoutError } from "./utils/time-limit";

export type TransactionOptions = {
  /** True when the error can never succeed on retry: the writes roll back and the key is recorded FAILED. */
  isPermanentError?: ((err: unknown) => boolean) | undefined;
  /** How long a duplicate waits for the first request's transaction, then replays or gets REQUEST_IN_PROGRESS. @default 2_000 */
  lockTimeoutMs?: number | undefined;
  /** Gives up on an operation running longer than this: its signal aborts and its writes roll back. @default no limit */
  timeoutMs?: number | undefined;
  /** What to keep with a key a permanent error marks FAILED, as with `execute`. @default nothing is kept */
  failureResponse?: ((err: unknown) => unknown) | undefined;
  /** The caller's last attempt, as with `execute`: a transient failure poisons the key. @default false */
  lastAttempt?: boolean | undefined;
};

/** What this mode shares with `execute`, as the handler holds it: the bounded store, observer, settings and read side. */
export type TransactionalCore = {
  store: BoundedStore;
  observer: Observer;
  settings: { ttlMs: number; maxRetries: number; storeTimeoutMs: number };
  reads: ReadSide;
};

const DEFAULT_LOCK_TIMEOUT_MS = 2_000;

/**
 * Carries the operation's own error, or the UnkeptAnswer it returned, out of the transaction: the
 * throw is what rolls the writes back, and it is told apart from a store failure.
 */
class OperationFailed extends Error {
  readonly error: unknown;
  readonly kind: FailureKind;

  constructor(error: unknown, kind: FailureKind) {
    super("the operation failed inside its transaction");
    this.error = error;
    this.kind = kind;
  }
}

type Outcome = { duplicate: IdempotencyRecord } | { serialized: string | null };

/**
 * The store of a handler that can run `executeInTransaction`: one whose client opens transactions
 * (a SQL store on an adapter from stores/clients/), or undefined. The one check of that capability.
 */
export function transactionalStore<Tx>(store: IdempotencyStore): TransactionalStore<Tx> | undefined {
  const candidate = store as Partial<TransactionalStore<Tx>>;
  return typeof candidate.transaction === "function" && candidate.supportsTransactions !== false
    ? (store as TransactionalStore<Tx>)
    : undefined;
}

/** Why `executeInTransaction` refuses a handler whose store has no `transactionalStore`. */
export function transactionsUnsupported(): TypeError {
  return new TypeError(
    "idempotency: executeInTransaction needs a PostgresStore, MySqlStore or SqliteStore on a client adapter from stores/clients/ (e.g. new PostgresStore(pgClient(pool))).",
  );
}

/**
 * One transaction: lock the key by inserting its record, run the operation on the same transaction,
 * store the result, commit. A duplicate's insert blocks on the uncommitted record's primary key for at
 * most `lockTimeoutMs`: then it sees the committed result (replay), the freed key (it runs), or gives
 * up with REQUEST_IN_PROGRESS. Any failure before the commit leaves neither the record nor the writes.
 * `report` (for `consume`) learns whether the operation ran, and whether its failure left the key FAILED.
 */
export async function executeInTransaction<T, Tx>(
  core: TransactionalCore,
  store: TransactionalStore<Tx>,
  scope: IdempotencyScope,
  requestHash: string,
  operation: TransactionalOperation<T, Tx>,
  options: TransactionOptions,
  report?: RunReport,
): Promise<ExecuteResult<T>> {
  const { observer, settings, reads } = core;
  const cached = reads.hasCache ? await reads.readCache(scope) : undefined;
  if (cached) return reads.answer<T>(scope, cached, requestHash, "cache");

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
        if (report) report.ran = true;
        started = performance.now();
        const ctx = new TransactionRun(scope, tx);
        deadline.start(options.timeoutMs ?? Infinity, "the operation", ctx);
        let serialized: string | null = null;
        let unkept: UnkeptAnswer<unknown> | undefined;
        try {
          const answer = await operation(ctx);
          deadline.check();
          if (answer instanceof UnkeptAnswer) unkept = answer;
          else serialized = serializeResult(answer);
        } catch (err) {
          throw new OperationFailed(
            err,
            classifyFailure(observer, scope, err, { isPermanentError: options.isPermanentError }),
          );
        }
        if (unkept) throw new OperationFailed(unkept, unkept.kind);
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
      const result = await settleRolledBack(core, store, scope, requestHash, lockTimeoutMs, err, options, report);
      observer.duration(scope.operation, result, (performance.now() - started) / 1000);
      if (err.error instanceof UnkeptAnswer) return { response: err.error as T, replayed: false };
      throw err.error;
    }
    if (sqlState(err) === LOCK_NOT_AVAILABLE || store.isLockNotAvailable?.(err) === true) {
      observer.record("rejectedInProgressLocked", scope);
      throw requestInProgress(Math.max(1, Math.ceil(lockTimeoutMs / 1000)));
    }
    core.store.failed("transaction");
    throw storeUnavailable(observer, "transaction", err, scope, ran);
  }
  deadline.stop();

  if ("duplicate" in outcome) return reads.answerStored<T>(scope, outcome.duplicate, requestHash);
  observer.duration(scope.operation, "success", (performance.now() - started) / 1000);
  observer.record("committed", scope);
  await reads.keepResult(scope, requestHash, outcome.serialized);
  return freshResult<T>(outcome.serialized);
}

/**
 * After the rollback, the failure policy of both modes (see settleFailure) with nothing to free: a
 * FAILED record is written in a short transaction of its own. If the store cannot be written, the
 * key simply stays free: nothing of the operation remains.
 */
function settleRolledBack(
  core: TransactionalCore,
  store: TransactionalStore<unknown>,
  scope: IdempotencyScope,
  requestHash: string,
  lockTimeoutMs: number,
  failed: OperationFailed,
  options: TransactionOptions,
  report: RunReport | undefined,
): Promise<FailureOutcome> {
  const failure =
    failed.error instanceof UnkeptAnswer
      ? unkeptFailure(core.observer, scope, failed.error, report, options.lastAttempt)
      : {
          err: failed.error instanceof UnstorableResultError ? failed.error.cause : failed.error,
          kind: failed.kind,
          kept: () => keptFailureResponse(core.observer, scope, failed.error, options.failureResponse),
          report,
          lastAttempt: options.lastAttempt,
        };
  const writes = {
    markFailed: (kept: string | null) => recordFailed(core, store, scope, requestHash, lockTimeoutMs, kept),
  };
  return settleFailure(core, scope, failure, writes, ROLLED_BACK);
}

/** Records the key FAILED: create and mark in one short transaction, unless another execution holds the key now. */
function recordFailed(
  core: TransactionalCore,
  store: TransactionalStore<unknown>,
  scope: IdempotencyScope,
  requestHash: string,
  lockTimeoutMs: number,
  kept: string | null,
): Promise<boolean> {
  const { ttlMs, storeTimeoutMs } = core.settings;
  const token = randomUUID();
  const recording = () => {
    const work = store.transaction(async (txStore) => {
      await txStore.setLockTimeout(lockTimeoutMs);
      const created = await txStore.create({ scope, requestHash, ttlMs, token });
      return created.status === "CREATED" && (await txStore.markFailed(scope, token, ttlMs, kept));
    });
    work.catch(() => {}); // Settles after we gave up: its rollback is the client's business now.
    return work;
  };
  return core.store.call("markFailed", recording, storeTimeoutMs + lockTimeoutMs);
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

const LOCK_NOT_AVAILABLE = "55P03";

/** The SQLSTATE of a driver error, wherever the client put it. */
export function sqlState(err: unknown, depth = 0): string | undefined {
  if (typeof err !== "object" || err === null || depth > 4) return undefined;
  const { code, originalCode, cause, meta, driverAdapterError } = err as Record<string, unknown>;
  // The driver's own error sits deepest: an ORM's wrapper may carry a code of its own (Prisma's "P2010",
  // whose driver error is at `meta.driverAdapterError.cause`; Drizzle's is at `cause`).
  const own = [originalCode, code].find(
    (candidate) => typeof candidate === "string" && /^[0-9A-Z]{5}$/.test(candidate),
  ) as string | undefined;
  return sqlState(cause, depth + 1) ?? sqlState(meta, depth + 1) ?? sqlState(driverAdapterError, depth + 1) ?? own;
}
