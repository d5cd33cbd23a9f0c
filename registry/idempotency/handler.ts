// IdempotencyHandler: runs an operation once per (operation, userId, key) and replays its result to retries.
import { BoundedStore, type StoreMethod } from "./bounded-store";
import { Leases } from "./execution";
import type { RunReport } from "./failure-policy";
import { hashPayload } from "./fingerprint";
import { checkScope } from "./scope";
import { consumeMessage, type ConsumeOptions, type ConsumeResult, type InboxCore, type InboxMessage } from "./consume";
import { executeLeased, type ExecuteContext, type ExecuteOptions, type LeasedCore } from "./leased";
import { consoleLogger, type BlockLogger as IdempotencyLogger } from "./logger";
import { noopMetrics, type IdempotencyMetrics } from "./metrics";
import { Observer } from "./observer";
import type { IdempotentOperation, TransactionalOperation } from "./operation-context";
import { ReadSide } from "./read-side";
import { storeUnavailable } from "./refusals";
import {
  executeInTransaction,
  transactionalStore,
  transactionsUnsupported,
  type TransactionalCore,
  type TransactionOptions,
} from "./transactional";
import type { ExecuteResult, IdempotencyCache, IdempotencyScope, IdempotencyStore, TransactionalStore } from "./types";
import { warnOnce } from "./utils/warn-once";
import { checkWaitMs } from "./wait-for-record";

export type { ExecuteContext, ExecuteOptions } from "./leased";

export type IdempotencyHandlerOptions = {
  /** How long a completed key replays (and blocks a different payload). @default 86_400_000 (24 h) */
  ttlMs?: number;
  /** Transient failures (and crash recoveries) a key may have before it is poisoned. @default 3 */
  maxRetries?: number;
  /** How often a running execution renews its lease; 0 turns the heartbeat off. @default 60_000 */
  heartbeatIntervalMs?: number;
  /** A store call slower than this counts as the store being down. @default 5_000 */
  storeTimeoutMs?: number;
  /** A cache call slower than this counts as a miss. @default 200 */
  cacheTimeoutMs?: number;
  /** Attempts to write a successful result before giving up on recording it. @default 3 */
  completionAttempts?: number;
  /** Sent with REQUEST_IN_PROGRESS as `Retry-After`. @default 1 */
  retryAfterSeconds?: number;
  /**
   * How long a duplicate that finds its key still running waits for the first attempt (then replays
   * its result) before answering REQUEST_IN_PROGRESS; at most 300_000. @default 0 (answer at once)
   */
  waitMs?: number;
  /** @default consoleLogger (warnings and errors as JSON lines on stderr) */
  logger?: IdempotencyLogger;
  metrics?: IdempotencyMetrics;
};

/**
 * Runs an operation once per scope against an `IdempotencyStore`, with an optional cache: a
 * recorded result is replayed, never re-run. It runs again only where it cannot have been recorded
 * (a crash after its side effect and before its result was stored, a result the store could not
 * take); an operation that must not repeat even then makes its side effect idempotent too.
 *
 * @example
 * const handler = new IdempotencyHandler(new PostgresStore(pool), new RedisCache(redis), { logger });
 * const { response, replayed } = await handler.execute(
 *   { operation: "payments:create", userId: "u_1", key, payload: { amount, currency } },
 *   (ctx) => chargeCard(amount, currency, { signal: ctx.signal }),
 *   { isPermanentError: (err) => err instanceof CardDeclinedError },
 * );
 */
export class IdempotencyHandler<Tx = unknown> {
  readonly ttlMs: number;
  readonly maxRetries: number;
  /** How long a duplicate of a running request waits for it by default (`waitMs`). */
  readonly waitMs: number;
  /** Whether `executeInTransaction` can run: the store opens transactions of the user's client. */
  readonly supportsTransactions: boolean;
  private readonly observer: Observer;
  private readonly settings: Required<Omit<IdempotencyHandlerOptions, "logger" | "metrics">>;

  /** The store behind its timeout, counting its failures: every store call goes through it. */
  private readonly bounded: BoundedStore;
  /** The cache, and how both modes answer a key that already holds a record. */
  private readonly reads: ReadSide;
  /** What `execute` runs on: the bounded store, observer, settings, leases and read side. */
  private readonly leased: LeasedCore;
  /** The store as `executeInTransaction` uses it; undefined when it has no transactions. */
  private readonly transactions: TransactionalStore<Tx> | undefined;
  private readonly transactionalCore: TransactionalCore;
  private readonly inbox: InboxCore;

  /** `Tx`: the transaction object of the store's client (see `executeInTransaction`). */
  constructor(
    store: IdempotencyStore | TransactionalStore<Tx>,
    cache?: IdempotencyCache,
    options: IdempotencyHandlerOptions = {},
  ) {
    this.transactions = transactionalStore<Tx>(store);
    this.supportsTransactions = this.transactions !== undefined;
    if (!options.logger) {
      warnOnce(
        "idempotency: IdempotencyHandler has no `logger`: store outages, lost leases and unrecorded results go to stderr as bare JSON lines (consoleLogger). Pass `{ logger }` (pino, the logger block, or createLoggerAdapter).",
      );
    }
    const observer = new Observer(options.logger ?? consoleLogger, options.metrics ?? noopMetrics);
    const settings = {
      ttlMs: positive("ttlMs", options.ttlMs ?? 86_400_000),
      maxRetries: positive("maxRetries", options.maxRetries ?? 3),
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? 60_000,
      storeTimeoutMs: positive("storeTimeoutMs", options.storeTimeoutMs ?? 5_000),
      cacheTimeoutMs: positive("cacheTimeoutMs", options.cacheTimeoutMs ?? 200),
      completionAttempts: positive("completionAttempts", options.completionAttempts ?? 3),
      retryAfterSeconds: options.retryAfterSeconds ?? 1,
      waitMs: checkWaitMs(options.waitMs ?? 0),
    };
    this.observer = observer;
    this.settings = settings;
    this.ttlMs = settings.ttlMs;
    this.maxRetries = settings.maxRetries;
    this.waitMs = settings.waitMs;
    this.bounded = new BoundedStore(store, settings.storeTimeoutMs, observer);
    this.reads = new ReadSide(cache, store.table, observer, settings);
    this.leased = {
      store: this.bounded,
      observer,
      settings,
      leases: new Leases(settings.heartbeatIntervalMs),
      reads: this.reads,
    };
    this.transactionalCore = { store: this.bounded, observer, settings, reads: this.reads };
    this.inbox = { observer, notify: (scope, operation) => this.execute({ ...scope, payload: null }, operation) };
  }

  /**
   * Runs `operation` unless this scope already ran: replays a success, rejects a duplicate that is
   * still running, a failed key, or a reused key with a different payload (all as IdempotencyError).
   * When `operation` throws, rejects with that same error after recording the failure.
   * `operation` gets the execution's context (`ctx.signal`, made only if read; `ctx.key`).
   */
  execute<T>(
    context: ExecuteContext,
    operation: IdempotentOperation<T>,
    options: ExecuteOptions = {},
  ): Promise<ExecuteResult<T>> {
    return executeLeased(this.leased, context, operation, options, undefined);
  }

  /**
   * Like `execute`, for an operation whose writes go to the store's own database: the record, the
   * writes (made on `ctx.tx`, the client's transaction) and the result commit in one transaction.
   */
  executeInTransaction<T>(
    context: ExecuteContext,
    operation: TransactionalOperation<T, Tx>,
    options: TransactionOptions = {},
  ): Promise<ExecuteResult<T>> {
    return this.executeTransaction(context, operation, options, undefined);
  }

  /**
   * Runs `operation` once per `(message.source, message.messageId)` for an at-least-once delivery:
   * see consume.ts for what each outcome means to the delivery.
   */
  consume<T>(
    message: InboxMessage,
    operation: IdempotentOperation<T>,
    options: ConsumeOptions<ExecuteOptions> = {},
  ): Promise<ConsumeResult<T>> {
    return consumeMessage(
      this.inbox,
      message,
      (scope, executeOptions, report) =>
        executeLeased(this.leased, { ...scope, payload: message.payload }, operation, executeOptions, report),
      options,
    );
  }

  /** `consume` whose writes commit with the message's record, as `executeInTransaction`. */
  consumeInTransaction<T>(
    message: InboxMessage,
    operation: TransactionalOperation<T, Tx>,
    options: ConsumeOptions<TransactionOptions> = {},
  ): Promise<ConsumeResult<T>> {
    return consumeMessage(
      this.inbox,
      message,
      (scope, executeOptions, report) =>
        this.executeTransaction({ ...scope, payload: message.payload }, operation, executeOptions, report),
      options,
    );
  }

  /**
   * Frees keys whose execution stopped sending heartbeats (a crashed or frozen worker). Each one
   * counts as a transient failure: released for retry, or poisoned once the budget is spent.
   */
  async recoverStuckRecords({ timeoutInMs = 5 * 60_000, limit = 100 }: { timeoutInMs?: number; limit?: number } = {}) {
    checkRecoveryTimeout(timeoutInMs, this.settings.heartbeatIntervalMs);
    const recovered = await this.callStore("recoverStuckRecords", (store) =>
      store.recoverStuckRecords({ olderThanMs: timeoutInMs, limit, maxRetries: this.maxRetries, ttlMs: this.ttlMs }),
    );
    for (const record of recovered) {
      const { retryCount, poisoned, ...scope } = record;
      this.observer.record(poisoned ? "recoveredPoisoned" : "recovered", scope, { retryCount });
    }
    const poisoned = recovered.filter((record) => record.poisoned).length;
    return { released: recovered.length - poisoned, poisoned };
  }

  /** Deletes up to `limit` expired records (and their retry counters) so their keys can be used again. */
  async cleanupExpiredRecords({ limit = 500 }: { limit?: number } = {}) {
    const deleted = await this.callStore("cleanupExpiredRecords", (store) => store.cleanupExpiredRecords({ limit }));
    this.observer.record("cleaned", undefined, { deleted });
    if (deleted > 0) this.observer.count("cleaned", {}, deleted);
    return { deleted };
  }

  /** `executeInTransaction`, with `report` as `executeLeased`'s (leased.ts). */
  private async executeTransaction<T>(
    context: ExecuteContext,
    operation: TransactionalOperation<T, Tx>,
    options: TransactionOptions,
    report: RunReport | undefined,
  ): Promise<ExecuteResult<T>> {
    const scope = checkScope(context);
    const requestHash = "requestHash" in context ? context.requestHash : hashPayload(context.payload);
    if (!this.transactions) throw transactionsUnsupported();
    return await executeInTransaction(
      this.transactionalCore,
      this.transactions,
      scope,
      requestHash,
      operation,
      options,
      report,
    );
  }

  /** `scope` is given when the call is about one key, so the refusal can be traced to it. */
  private async callStore<T>(
    method: StoreMethod,
    call: (store: IdempotencyStore) => Promise<T>,
    scope?: IdempotencyScope,
  ): Promise<T> {
    try {
      return await this.bounded.call(method, call);
    } catch (err) {
      throw storeUnavailable(this.observer, method, err, scope);
    }
  }
}

/**
 * A live execution renews its record every heartbeat interval: a shorter recovery timeout would
 * free (and let a duplicate re-run) operations that are still running, and one under two intervals
 * does so whenever a single beat is late.
 */
function checkRecoveryTimeout(timeoutInMs: number, heartbeatIntervalMs: number): void {
  if (!(heartbeatIntervalMs > 0)) return;
  if (!(timeoutInMs >= heartbeatIntervalMs)) {
    throw new RangeError(
      `idempotency: the recovery timeout (${timeoutInMs} ms) is shorter than the heartbeat interval (${heartbeatIntervalMs} ms), so it would recover executions that are still running; use several intervals (the defaults are 5 minutes and 1).`,
    );
  }
  if (timeoutInMs < 2 * heartbeatIntervalMs) {
    warnOnce(
      `idempotency: the recovery timeout (${timeoutInMs} ms) is under two heartbeat intervals (${heartbeatIntervalMs} ms): one late heartbeat lets recovery free a running execution.`,
    );
  }
}

function positive(name: string, value: number): number {
  if (!(value > 0)) throw new RangeError(`idempotency: \`${name}\` must be a positive number, got ${value}.`);
  return value;
}
