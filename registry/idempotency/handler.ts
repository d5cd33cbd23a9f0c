// IdempotencyHandler: runs an operation once per (operation, userId, key) and replays its result to retries.
import { randomUUID } from "node:crypto";
import { BoundedStore, type StoreMethod } from "./bounded-store";
import { Execution, Leases } from "./execution";
import type { FailureClassifiers, RunReport } from "./failure-policy";
import { hashPayload } from "./fingerprint";
import { checkScope } from "./scope";
import { consumeMessage, type ConsumeOptions, type ConsumeResult, type InboxCore, type InboxMessage } from "./consume";
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
import type {
  CreateResult,
  ExecuteResult,
  IdempotencyCache,
  IdempotencyRecord,
  IdempotencyScope,
  IdempotencyStore,
  StepResults,
  TransactionalStore,
} from "./types";
import { freshResult } from "./result-json";
import { warnOnce } from "./utils/warn-once";
import { releaseUnanswered } from "./release-unanswered";
import { checkWaitMs, waitForFirstAttempt, type WaitAccess, type Waited } from "./wait-for-record";

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

/** What to protect: the scope, and either the payload to fingerprint or its precomputed hash. */
export type ExecuteContext = IdempotencyScope & ({ payload: unknown } | { requestHash: string });

/** How the operation's errors are classified (see FailureClassifiers), and how a duplicate of a running call waits. */
export type ExecuteOptions = FailureClassifiers & {
  /** This call's `waitMs` (see IdempotencyHandlerOptions). @default the handler's */
  waitMs?: number | undefined;
  /** Aborts a duplicate's wait (the client went away): it answers REQUEST_IN_PROGRESS at once. */
  signal?: AbortSignal | undefined;
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
  /** Renews the lease of every running execution from one interval. */
  private readonly leases: Leases;
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
    this.leases = new Leases(settings.heartbeatIntervalMs);
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
    return this.executeLeased(context, operation, options, undefined);
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
        this.executeLeased({ ...scope, payload: message.payload }, operation, executeOptions, report),
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

  /** `execute`, telling `report` (for `consume`) whether the operation ran and whether its failure left the key FAILED. */
  private async executeLeased<T>(
    context: ExecuteContext,
    operation: IdempotentOperation<T>,
    options: ExecuteOptions,
    report: RunReport | undefined,
  ): Promise<ExecuteResult<T>> {
    const scope = checkScope(context);
    const requestHash = "requestHash" in context ? context.requestHash : hashPayload(context.payload);
    const { reads } = this;
    // Without a cache there is nothing to wait for: no await, so no promise hop on every request.
    const cached = reads.hasCache ? await reads.readCache(scope) : undefined;
    if (cached) return reads.answer<T>(scope, cached, requestHash, "cache");

    const waitMs = options.waitMs === undefined ? this.settings.waitMs : checkWaitMs(options.waitMs);
    const token: string = randomUUID();
    const created = await this.create(scope, requestHash, token);
    if (created.status === "DUPLICATE") {
      const waited = await this.waitIfRunning(scope, requestHash, created.record, waitMs, options.signal);
      if ("record" in waited) return reads.answerStored<T>(scope, waited.record, requestHash);
      // The first attempt gave the key back while we waited, and our own create took it.
      this.observer.record("lockAcquired", scope);
      return this.run(scope, requestHash, waited.token, operation, options, waited.steps, report);
    }
    this.observer.record("lockAcquired", scope);
    return this.run(scope, requestHash, token, operation, options, created.steps, report);
  }

  /** `executeInTransaction`, with `report` as `executeLeased`'s. */
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

  private async run<T>(
    scope: IdempotencyScope,
    requestHash: string,
    token: string,
    operation: IdempotentOperation<T>,
    options: ExecuteOptions,
    steps: StepResults | undefined,
    report: RunReport | undefined,
  ): Promise<ExecuteResult<T>> {
    const execution = new Execution(this.bounded, this.observer, this.settings, this.leases, scope, token, steps);
    execution.holdLease();
    if (report) report.ran = true;
    const started = performance.now();
    let result: T;
    try {
      // The execution is the context itself: no object of its own per request.
      result = await operation(execution);
    } catch (err) {
      execution.stopLease();
      const outcome = await execution.fail(err, options, report);
      this.observer.duration(scope.operation, outcome, (performance.now() - started) / 1000);
      throw err;
    }
    execution.stopLease();
    this.observer.duration(scope.operation, "success", (performance.now() - started) / 1000);
    const { serialized, recorded } = await execution.complete(result, report);
    if (recorded && this.reads.hasCache) await this.reads.keepResult(scope, requestHash, serialized);
    return freshResult<T>(serialized);
  }

  /** The record, under the token chosen here; a failure is STORE_UNAVAILABLE, and frees a record it may have made. */
  private async create(scope: IdempotencyScope, requestHash: string, token: string): Promise<CreateResult> {
    let creating: Promise<CreateResult> | undefined;
    try {
      return await this.bounded.call(
        "create",
        (store) => (creating = store.create({ scope, requestHash, ttlMs: this.ttlMs, token })),
      );
    } catch (err) {
      if (creating) releaseUnanswered(this.bounded, this.observer, scope, token, creating);
      throw storeUnavailable(this.observer, "create", err, scope);
    }
  }

  /** A duplicate of a running attempt waits for it (with `waitMs`); any other is answered from the record at once, with no await. */
  private waitIfRunning(
    scope: IdempotencyScope,
    requestHash: string,
    record: IdempotencyRecord,
    waitMs: number,
    signal: AbortSignal | undefined,
  ): Waited | Promise<Waited> {
    if (!(waitMs > 0 && record.status === "PROCESSING" && record.requestHash === requestHash)) return { record };
    const access: WaitAccess = {
      get: () => this.callStore("get", (store) => store.get(scope), scope),
      create: (token) => this.create(scope, requestHash, token),
    };
    return waitForFirstAttempt(access, this.observer, { scope, requestHash, record, waitMs, signal });
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
