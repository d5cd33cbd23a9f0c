// IdempotencyHandler: runs an operation once per (operation, userId, key) and replays its result to retries.
import { randomUUID } from "node:crypto";
import { IdempotencyError } from "./errors";
import { BoundedStore, type StoreMethod } from "./bounded-store";
import { Execution, Leases } from "./execution";
import { hashPayload } from "./fingerprint";
import { checkScope } from "./scope";
import { consumeMessage, type ConsumeOptions, type ConsumeResult, type InboxCore, type InboxMessage } from "./consume";
import { silentLogger, type IdempotencyLogger } from "./logger";
import { noopMetrics, type IdempotencyMetrics } from "./metrics";
import { Observer } from "./observer";
import { isCachedRecord } from "./caches/cached-record";
import { noopCache } from "./caches/noop-cache";
import type { OperationContext } from "./operation-context";
import { executeInTransaction, type TransactionalCore, type TransactionalOperation, type TransactionalStore, type TransactionOptions } from "./transactional";
import type { CachedRecord, CacheScope, CreateResult, IdempotencyCache, IdempotencyRecord, IdempotencyScope, IdempotencyStore, StepResults } from "./types";
import { deserializeResult, freshResult } from "./result-json";
import { warnOnce } from "./utils/warn-once";
import { withTimeout } from "./utils/with-timeout";
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
  logger?: IdempotencyLogger;
  metrics?: IdempotencyMetrics;
};

/** What to protect: the scope, and either the payload to fingerprint or its precomputed hash. */
export type ExecuteContext = IdempotencyScope & ({ payload: unknown } | { requestHash: string });

export type ExecuteOptions = {
  /** True when the error can never succeed on retry: the key is marked FAILED at once. */
  isPermanentError?: (err: unknown) => boolean;
  /**
   * True when the operation answered but its answer cannot be captured (a streamed HTTP response):
   * the key is freed for the next request without spending its retry budget, and nothing replays.
   * Counted as `idempotency_executions_total{outcome="uncaptured"}`.
   */
  isUncapturable?: (err: unknown) => boolean;
  /** @deprecated Renamed `isUncapturable` (one word per event: "unrecorded" is a result the store did not take). Used only when `isUncapturable` is not given. */
  isUnrecordable?: (err: unknown) => boolean;
  /**
   * What to keep with a key that this error fails for good (JSON-safe, e.g. the HTTP error response):
   * later calls get it as `REQUEST_FAILED`'s `response`. @default nothing is kept
   */
  failureResponse?: (err: unknown) => unknown;
  /** This call's `waitMs` (see IdempotencyHandlerOptions). @default the handler's */
  waitMs?: number | undefined;
  /** Aborts a duplicate's wait (the client went away): it answers REQUEST_IN_PROGRESS at once. */
  signal?: AbortSignal | undefined;
};

/** `response` is the operation's result as JSON would carry it, identical on the first run and on replays. */
export type ExecuteResult<T> = { response: T; replayed: boolean };

/** The operation receives its context: `ctx.signal` aborts if its record is taken over while it runs. */
export type IdempotentOperation<T> = (ctx: OperationContext) => Promise<T> | T;

const CACHE_EXPIRY_MARGIN_MS = 1_000;

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
  private readonly cache: IdempotencyCache;
  /** The store's table (or a name of this handler's own), so stores sharing one cache stay apart. */
  private readonly cacheNamespace: string;
  private readonly observer: Observer;
  private readonly settings: Required<Omit<IdempotencyHandlerOptions, "logger" | "metrics">>;

  /** The store behind its timeout, counting its failures: every store call goes through it. */
  private readonly bounded: BoundedStore;
  /** Renews the lease of every running execution from one interval. */
  private readonly leases: Leases;

  /** `Tx`: the transaction object of the store's client (see `executeInTransaction`). */
  constructor(
    store: IdempotencyStore | TransactionalStore<Tx>,
    cache?: IdempotencyCache,
    options: IdempotencyHandlerOptions = {},
  ) {
    this.cache = cache ?? noopCache;
    const transactional = store as Partial<TransactionalStore<Tx>>;
    this.supportsTransactions = typeof transactional.transaction === "function" && transactional.supportsTransactions !== false;
    this.cacheNamespace = store.table ?? `handler:${randomUUID()}`;
    if (!options.logger) {
      warnOnce(
        "idempotency: IdempotencyHandler has no `logger`, so store outages, lost leases and unrecorded results go unseen. Pass `{ logger }` (pino, the logger block, or createLoggerAdapter).",
      );
    }
    this.observer = new Observer(options.logger ?? silentLogger, options.metrics ?? noopMetrics);
    this.settings = {
      ttlMs: positive("ttlMs", options.ttlMs ?? 86_400_000),
      maxRetries: positive("maxRetries", options.maxRetries ?? 3),
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? 60_000,
      storeTimeoutMs: positive("storeTimeoutMs", options.storeTimeoutMs ?? 5_000),
      cacheTimeoutMs: positive("cacheTimeoutMs", options.cacheTimeoutMs ?? 200),
      completionAttempts: positive("completionAttempts", options.completionAttempts ?? 3),
      retryAfterSeconds: options.retryAfterSeconds ?? 1,
      waitMs: checkWaitMs(options.waitMs ?? 0),
    };
    this.ttlMs = this.settings.ttlMs;
    this.maxRetries = this.settings.maxRetries;
    this.waitMs = this.settings.waitMs;
    this.bounded = new BoundedStore(store, this.settings.storeTimeoutMs, this.observer);
    this.leases = new Leases(this.settings.heartbeatIntervalMs);
  }

  /**
   * Runs `operation` unless this scope already ran: replays a success, rejects a duplicate that is
   * still running, a failed key, or a reused key with a different payload (all as IdempotencyError).
   * When `operation` throws, rejects with that same error after recording the failure.
   * `operation` gets the execution's context (`ctx.signal`, made only if read; `ctx.key`).
   */
  async execute<T>(context: ExecuteContext, operation: IdempotentOperation<T>, options: ExecuteOptions = {}): Promise<ExecuteResult<T>> {
    const scope = checkScope(context);
    const requestHash = "requestHash" in context ? context.requestHash : hashPayload(context.payload);

    // Without a cache there is nothing to wait for: no await, so no promise hop on every request.
    const cached = this.cache === noopCache ? undefined : await this.readCache(scope);
    if (cached) return this.answerDuplicate<T>(scope, cached, requestHash, "cache");

    const waitMs = options.waitMs === undefined ? this.settings.waitMs : checkWaitMs(options.waitMs);
    const token: string = randomUUID();
    const created = await this.create(scope, requestHash, token);
    if (created.status === "DUPLICATE") {
      const waited = await this.waitIfRunning(scope, requestHash, created.record, waitMs, options.signal);
      if ("record" in waited) return this.answerStored<T>(scope, waited.record, requestHash);
      // The first attempt gave the key back while we waited, and our own create took it.
      this.observer.record("lockAcquired", scope);
      return this.run(scope, requestHash, waited.token, operation, options, waited.steps);
    }
    this.observer.record("lockAcquired", scope);
    return this.run(scope, requestHash, token, operation, options, created.steps);
  }

  /**
   * Like `execute`, for an operation whose writes go to the store's own database: the record, the
   * writes (made on `ctx.tx`, the client's transaction) and the result commit in one transaction.
   */
  async executeInTransaction<T>(context: ExecuteContext, operation: TransactionalOperation<T, Tx>, options: TransactionOptions = {}): Promise<ExecuteResult<T>> {
    const scope = checkScope(context);
    const requestHash = "requestHash" in context ? context.requestHash : hashPayload(context.payload);
    const { bounded, observer, settings } = this;
    const core: TransactionalCore = {
      store: bounded,
      observer,
      settings,
      readCache: (scope) => this.readCache(scope),
      writeCache: (scope, record, ttlMs) => this.writeCache(scope, record, ttlMs),
      answerDuplicate: (scope, record, hash, source) => this.answerDuplicate(scope, record, hash, source),
    };
    return executeInTransaction(core, scope, requestHash, operation, options);
  }

  /**
   * Runs `operation` once per `(message.source, message.messageId)` for an at-least-once delivery:
   * see consume.ts for what each outcome means to the delivery.
   */
  consume<T>(message: InboxMessage, operation: IdempotentOperation<T>, options: ConsumeOptions<ExecuteOptions> = {}): Promise<ConsumeResult<T>> {
    return consumeMessage(this.inbox(), message, (scope, executeOptions, started) =>
      this.execute({ ...scope, payload: message.payload }, (ctx) => {
      started();
      return operation(ctx);
    }, executeOptions), options);
  }

  /** `consume` whose writes commit with the message's record, as `executeInTransaction`. */
  consumeInTransaction<T>(message: InboxMessage, operation: TransactionalOperation<T, Tx>, options: ConsumeOptions<TransactionOptions> = {}): Promise<ConsumeResult<T>> {
    return consumeMessage(this.inbox(), message, (scope, executeOptions, started) =>
      this.executeInTransaction({ ...scope, payload: message.payload }, (ctx) => {
      started();
      return operation(ctx);
    }, executeOptions), options);
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

  private async run<T>(
    scope: IdempotencyScope,
    requestHash: string,
    token: string,
    operation: IdempotentOperation<T>,
    options: ExecuteOptions,
    steps: StepResults | undefined,
  ): Promise<ExecuteResult<T>> {
    const execution = new Execution(this.bounded, this.observer, this.settings, this.leases, scope, token, steps);
    execution.holdLease();
    const started = performance.now();
    let result: T;
    try {
      // The execution is the context itself: no object of its own per request.
      result = await operation(execution);
    } catch (err) {
      execution.stopLease();
      const outcome = await execution.fail(err, options);
      this.observer.duration(scope.operation, outcome, (performance.now() - started) / 1000);
      throw err;
    }
    execution.stopLease();
    this.observer.duration(scope.operation, "success", (performance.now() - started) / 1000);
    const { serialized, recorded } = await execution.complete(result);
    if (recorded && this.cache !== noopCache) {
      await this.writeCache(scope, { requestHash, status: "SUCCESS", response: serialized }, this.ttlMs);
    }
    return freshResult<T>(serialized);
  }

  /** The record, under the token chosen here; a failure is STORE_UNAVAILABLE, and frees a record it may have made. */
  private async create(scope: IdempotencyScope, requestHash: string, token: string): Promise<CreateResult> {
    let creating: Promise<CreateResult> | undefined;
    try {
      return await this.bounded.call("create", (store) => (creating = store.create({ scope, requestHash, ttlMs: this.ttlMs, token })));
    } catch (err) {
      if (creating) releaseUnanswered(this.bounded, this.observer, scope, token, creating);
      throw this.storeUnavailable("create", err, scope);
    }
  }

  /** A duplicate of a running attempt waits for it (with `waitMs`); any other is answered from the record at once, with no await. */
  private waitIfRunning(scope: IdempotencyScope, requestHash: string, record: IdempotencyRecord, waitMs: number, signal: AbortSignal | undefined): Waited | Promise<Waited> {
    if (!(waitMs > 0 && record.status === "PROCESSING" && record.requestHash === requestHash)) return { record };
    const access: WaitAccess = {
      get: () => this.callStore("get", (store) => store.get(scope), scope),
      create: (token) => this.create(scope, requestHash, token),
    };
    return waitForFirstAttempt(access, this.observer, { scope, requestHash, record, waitMs, signal });
  }

  /** A record found by `create` (or a wait): cached once it is settled, then answered as a duplicate. */
  private async answerStored<T>(scope: IdempotencyScope, record: IdempotencyRecord, requestHash: string): Promise<ExecuteResult<T>> {
    if (this.cache !== noopCache && record.status !== "PROCESSING" && record.requestHash === requestHash) {
      await this.writeCache(scope, toCached(record), record.expiresAt.getTime() - Date.now());
    }
    return this.answerDuplicate<T>(scope, record, requestHash, "store");
  }

  private answerDuplicate<T>(scope: IdempotencyScope, record: CachedRecord | IdempotencyRecord, requestHash: string, source: "cache" | "store"): ExecuteResult<T> {
    if (record.requestHash !== requestHash) {
      this.observer.record("keyReused", scope, { status: record.status, source });
      throw new IdempotencyError(
        "KEY_REUSED_WITH_DIFFERENT_REQUEST",
        "This Idempotency-Key was already used with a different request payload; use a new key for a new request.",
      );
    }
    if (record.status === "SUCCESS") {
      this.observer.record("replayed", scope, { source });
      return { response: deserializeResult<T>(record.response), replayed: true };
    }
    if (record.status === "FAILED") {
      this.observer.record("rejectedFailed", scope, { source });
      throw new IdempotencyError("REQUEST_FAILED", "The request with this Idempotency-Key failed permanently; use a new key to try again.", {
        response: deserializeResult(record.response),
      });
    }
    this.observer.record("rejectedInProgress", scope, { source });
    throw new IdempotencyError("REQUEST_IN_PROGRESS", "A request with this Idempotency-Key is still being processed; retry later.", {
      retryAfterSeconds: this.settings.retryAfterSeconds,
    });
  }

  private inbox(): InboxCore {
    return {
      observer: this.observer,
      notify: (scope, operation) => this.execute({ ...scope, payload: null }, operation),
      readRecord: (scope) => this.callStore("get", (store) => store.get(scope), scope),
    };
  }

  /** `scope` is given when the call is about one key, so the refusal can be traced to it. */
  private async callStore<T>(method: StoreMethod, call: (store: IdempotencyStore) => Promise<T>, scope?: IdempotencyScope): Promise<T> {
    try {
      return await this.bounded.call(method, call);
    } catch (err) {
      throw this.storeUnavailable(method, err, scope);
    }
  }

  /** Logs a failed store call and returns the error the caller gets for it. */
  private storeUnavailable(method: StoreMethod, err: unknown, scope?: IdempotencyScope): IdempotencyError {
    this.observer.record("storeUnavailable", scope, { method, err });
    return new IdempotencyError("STORE_UNAVAILABLE", "The idempotency store is unavailable; the request was not executed. Retry later.", {
      cause: err,
    });
  }

  private async readCache(scope: IdempotencyScope): Promise<CachedRecord | undefined> {
    if (this.cache === noopCache) return undefined;
    try {
      const cached = await withTimeout(this.cache.get(this.cacheScope(scope)), this.settings.cacheTimeoutMs, "cache.get");
      if (cached !== undefined && cached !== null && !isCachedRecord(cached)) {
        // Trusting it would answer every retry with a 500 until it expired, while the store holds the answer.
        this.observer.record("cacheMalformed", scope);
        return undefined;
      }
      this.observer.count(cached ? "cacheHits" : "cacheMisses", { operation: scope.operation });
      return cached ?? undefined;
    } catch (err) {
      this.observer.record("cacheReadFailed", scope, { err });
      return undefined;
    }
  }

  private cacheScope(scope: IdempotencyScope): CacheScope {
    return { namespace: this.cacheNamespace, operation: scope.operation, userId: scope.userId, key: scope.key };
  }

  /** Caches only completed records, and never past the store's own expiry (minus a clock-skew margin). */
  private async writeCache(scope: IdempotencyScope, record: CachedRecord, ttlMs: number): Promise<void> {
    const safeTtl = Math.min(ttlMs, this.ttlMs) - CACHE_EXPIRY_MARGIN_MS;
    if (safeTtl <= 0 || this.cache === noopCache) return;
    try {
      await withTimeout(this.cache.set(this.cacheScope(scope), record, safeTtl), this.settings.cacheTimeoutMs, "cache.set");
    } catch (err) {
      this.observer.record("cacheWriteFailed", scope, { err });
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
    warnOnce(`idempotency: the recovery timeout (${timeoutInMs} ms) is under two heartbeat intervals (${heartbeatIntervalMs} ms): one late heartbeat lets recovery free a running execution.`);
  }
}

function toCached(record: IdempotencyRecord): CachedRecord {
  return { requestHash: record.requestHash, status: record.status === "SUCCESS" ? "SUCCESS" : "FAILED", response: record.response };
}

function positive(name: string, value: number): number {
  if (!(value > 0)) throw new RangeError(`idempotency: \`${name}\` must be a positive number, got ${value}.`);
  return value;
}
