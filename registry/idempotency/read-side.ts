// The read side of both execution modes: the cache read, the answer to a duplicate, and the cache write-back.
import { randomUUID } from "node:crypto";
import { isCachedRecord } from "./caches/cached-record";
import { noopCache } from "./caches/noop-cache";
import type { Observer } from "./observer";
import { keyReused, requestFailed, requestInProgress } from "./refusals";
import { deserializeResult } from "./result-json";
import type {
  CachedRecord,
  CacheScope,
  ExecuteResult,
  IdempotencyCache,
  IdempotencyRecord,
  IdempotencyScope,
} from "./types";
import { withTimeout } from "./utils/time-limit";

const CACHE_EXPIRY_MARGIN_MS = 1_000;

export type ReadSideSettings = { ttlMs: number; cacheTimeoutMs: number; retryAfterSeconds: number };

/**
 * What a key already holds, answered the same way by `execute` and `executeInTransaction`: a
 * replay, REQUEST_FAILED, REQUEST_IN_PROGRESS or KEY_REUSED_WITH_DIFFERENT_REQUEST. The cache is
 * read first and written back once a record is settled; its failures are logged, never surfaced.
 *
 * @example
 * const cached = reads.hasCache ? await reads.readCache(scope) : undefined;
 * if (cached) return reads.answer<T>(scope, cached, requestHash, "cache");
 */
export class ReadSide {
  /** False with the no-op cache: the caller skips the read, and its await, on every request. */
  readonly hasCache: boolean;
  private readonly cache: IdempotencyCache;
  /** The store's table (or a name of this handler's own), so stores sharing one cache stay apart. */
  private readonly namespace: string;
  private readonly observer: Observer;
  private readonly settings: ReadSideSettings;

  constructor(
    cache: IdempotencyCache | undefined,
    table: string | undefined,
    observer: Observer,
    settings: ReadSideSettings,
  ) {
    this.cache = cache ?? noopCache;
    this.hasCache = this.cache !== noopCache;
    this.namespace = table ?? `handler:${randomUUID()}`;
    this.observer = observer;
    this.settings = settings;
  }

  /** The completed record the cache holds for `scope`; a miss, a malformed entry or a failed read is undefined. */
  async readCache(scope: IdempotencyScope): Promise<CachedRecord | undefined> {
    if (!this.hasCache) return undefined;
    try {
      const cached = await withTimeout(
        this.cache.get(this.cacheScope(scope)),
        this.settings.cacheTimeoutMs,
        "cache.get",
      );
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

  /**
   * A record the store answered with (a duplicate's create, or a wait): cached once it is settled, then answered.
   * Without a cache to write back, answered at once: no promise and no async frame on every replay.
   */
  answerStored<T>(
    scope: IdempotencyScope,
    record: IdempotencyRecord,
    requestHash: string,
  ): ExecuteResult<T> | Promise<ExecuteResult<T>> {
    if (this.hasCache && record.status !== "PROCESSING" && record.requestHash === requestHash) {
      const cached: CachedRecord = { requestHash, status: record.status, response: record.response };
      return this.writeCache(scope, cached, record.expiresAt.getTime() - Date.now()).then(() =>
        this.answer<T>(scope, record, requestHash, "store"),
      );
    }
    return this.answer<T>(scope, record, requestHash, "store");
  }

  /** A recorded result replays; any other record refuses the call with the IdempotencyError that names why. */
  answer<T>(
    scope: IdempotencyScope,
    record: CachedRecord | IdempotencyRecord,
    requestHash: string,
    source: "cache" | "store",
  ): ExecuteResult<T> {
    if (record.requestHash !== requestHash) {
      this.observer.record("keyReused", scope, { status: record.status, source });
      throw keyReused();
    }
    if (record.status === "SUCCESS") {
      this.observer.record("replayed", scope, { source });
      return { response: deserializeResult<T>(record.response), replayed: true };
    }
    if (record.status === "FAILED") {
      this.observer.record("rejectedFailed", scope, { source });
      throw requestFailed(deserializeResult(record.response));
    }
    this.observer.record("rejectedInProgress", scope, { source });
    throw requestInProgress(this.settings.retryAfterSeconds);
  }

  /** Caches a result this call recorded, for the key's whole TTL. */
  keepResult(scope: IdempotencyScope, requestHash: string, serialized: string | null): Promise<void> {
    return this.writeCache(scope, { requestHash, status: "SUCCESS", response: serialized }, this.settings.ttlMs);
  }

  /** Caches only completed records, and never past the store's own expiry (minus a clock-skew margin). */
  private async writeCache(scope: IdempotencyScope, record: CachedRecord, ttlMs: number): Promise<void> {
    const safeTtl = Math.min(ttlMs, this.settings.ttlMs) - CACHE_EXPIRY_MARGIN_MS;
    if (safeTtl <= 0 || !this.hasCache) return;
    try {
      await withTimeout(
        this.cache.set(this.cacheScope(scope), record, safeTtl),
        this.settings.cacheTimeoutMs,
        "cache.set",
      );
    } catch (err) {
      this.observer.record("cacheWriteFailed", scope, { err });
    }
  }

  private cacheScope(scope: IdempotencyScope): CacheScope {
    return { namespace: this.namespace, operation: scope.operation, userId: scope.userId, key: scope.key };
  }
}
