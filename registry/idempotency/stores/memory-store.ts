// MemoryStore: the IdempotencyStore contract in one process's memory, for development and tests.
import type {
  CreateInput,
  CreateResult,
  IdempotencyRecord,
  IdempotencyScope,
  IdempotencyStore,
  RecoveredRecord,
  RecoverInput,
} from "../types";

export type MemoryStoreOptions = {
  /** Records kept at most; when full, expired then oldest completed records are evicted. @default 10_000 */
  maxRecords?: number;
  /** The clock, in epoch milliseconds; tests pass a fake one. @default Date.now */
  now?: () => number;
};

type Counter = { count: number; expiresAt: number };

/**
 * Keeps records in a Map. Nothing is shared between processes, so use it only where one process
 * serves every request (development, tests, single-instance tools).
 *
 * @example
 * const handler = new IdempotencyHandler(new MemoryStore({ maxRecords: 1_000 }));
 */
export class MemoryStore implements IdempotencyStore {
  private readonly records = new Map<string, IdempotencyRecord>();
  private readonly counters = new Map<string, Counter>();
  private readonly maxRecords: number;
  private readonly now: () => number;
  /** No record expires before this instant, so a full store skips the sweep for expired records until then. */
  private earliestExpiry = Infinity;

  constructor(options: MemoryStoreOptions = {}) {
    this.maxRecords = options.maxRecords ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  async create({ scope, requestHash, ttlMs, token }: CreateInput): Promise<CreateResult> {
    const recordId = id(scope);
    const existing = this.records.get(recordId);
    if (existing && this.isLive(existing)) return { status: "DUPLICATE", record: { ...existing } };
    this.records.delete(recordId);
    this.makeRoom();
    const now = new Date(this.now());
    this.earliestExpiry = Math.min(this.earliestExpiry, now.getTime() + ttlMs);
    // Fields spelled out: spreading `scope` into a literal this size costs several microseconds per request.
    this.records.set(recordId, {
      operation: scope.operation,
      userId: scope.userId,
      key: scope.key,
      requestHash,
      status: "PROCESSING",
      response: null,
      token,
      expiresAt: new Date(now.getTime() + ttlMs),
      updatedAt: now,
    });
    return { status: "CREATED" };
  }

  async get(scope: IdempotencyScope): Promise<IdempotencyRecord | undefined> {
    const record = this.live(scope);
    return record && { ...record };
  }

  async markSuccess(scope: IdempotencyScope, token: string, response: string | null, ttlMs: number): Promise<boolean> {
    return this.settle(scope, token, (record) => Object.assign(record, { status: "SUCCESS", response, ...this.stamp(ttlMs) }));
  }

  async markFailed(scope: IdempotencyScope, token: string, ttlMs: number): Promise<boolean> {
    return this.settle(scope, token, (record) => Object.assign(record, { status: "FAILED", ...this.stamp(ttlMs) }));
  }

  async release(scope: IdempotencyScope, token: string): Promise<boolean> {
    return this.settle(scope, token, () => this.records.delete(id(scope)));
  }

  async heartbeat(scope: IdempotencyScope, token: string, ttlMs = 0): Promise<boolean> {
    return this.settle(scope, token, (record) => {
      const now = this.now();
      record.updatedAt = new Date(now);
      record.expiresAt = new Date(Math.max(record.expiresAt.getTime(), now + ttlMs));
    });
  }

  async incrementRetryCount(scope: IdempotencyScope, ttlMs: number): Promise<number> {
    return this.bump(scope, ttlMs);
  }

  /** Synchronous, like every step of recovery, so two concurrent runs can never pick the same record. */
  async recoverStuckRecords({ olderThanMs, limit, maxRetries, ttlMs }: RecoverInput): Promise<RecoveredRecord[]> {
    const cutoff = this.now() - olderThanMs;
    const stuck = [...this.records.values()]
      .filter((record) => record.status === "PROCESSING" && record.updatedAt.getTime() < cutoff && this.isLive(record))
      .sort((a, b) => a.updatedAt.getTime() - b.updatedAt.getTime())
      .slice(0, limit);
    return stuck.map((record) => {
      const retryCount = this.bump(record, ttlMs);
      const poisoned = retryCount >= maxRetries;
      if (poisoned) Object.assign(record, { status: "FAILED", ...this.stamp(ttlMs) });
      else this.records.delete(id(record));
      return { operation: record.operation, userId: record.userId, key: record.key, retryCount, poisoned };
    });
  }

  private bump(scope: IdempotencyScope, ttlMs: number): number {
    const key = id(scope);
    const current = this.counters.get(key);
    const count = current && current.expiresAt > this.now() ? current.count + 1 : 1;
    this.counters.delete(key);
    this.counters.set(key, { count, expiresAt: this.now() + ttlMs });
    if (this.counters.size > this.maxRecords) this.counters.delete(this.counters.keys().next().value as string);
    return count;
  }


  async cleanupExpiredRecords({ limit }: { limit: number }): Promise<number> {
    let deleted = 0;
    for (const [key, record] of this.records) {
      if (deleted >= limit) break;
      if (!this.isLive(record)) {
        this.records.delete(key);
        deleted++;
      }
    }
    let countersDeleted = 0;
    for (const [key, counter] of this.counters) {
      if (countersDeleted >= limit) break;
      if (counter.expiresAt <= this.now()) {
        this.counters.delete(key);
        countersDeleted++;
      }
    }
    return deleted;
  }

  private settle(scope: IdempotencyScope, token: string, change: (record: IdempotencyRecord) => unknown): boolean {
    const record = this.live(scope);
    if (!record || record.status !== "PROCESSING" || record.token !== token) return false;
    change(record);
    return true;
  }

  private live(scope: IdempotencyScope): IdempotencyRecord | undefined {
    const record = this.records.get(id(scope));
    return record && this.isLive(record) ? record : undefined;
  }

  private isLive(record: IdempotencyRecord): boolean {
    return record.expiresAt.getTime() > this.now();
  }

  private stamp(ttlMs: number) {
    const now = this.now();
    this.earliestExpiry = Math.min(this.earliestExpiry, now + ttlMs);
    return { updatedAt: new Date(now), expiresAt: new Date(now + ttlMs) };
  }

  /**
   * Evicts expired records first, then the oldest completed ones; running executions are never evicted.
   * It frees 1 % of the store at a time: a Map keeps the slots of deleted entries until it grows, and
   * walking past them on every create would make each request O(records) once the store is full.
   */
  private makeRoom(): void {
    if (this.records.size < this.maxRecords) return;
    if (this.now() >= this.earliestExpiry) this.evictExpired();
    const target = this.maxRecords - Math.max(1, Math.floor(this.maxRecords / 100));
    for (const [key, record] of this.records) {
      if (this.records.size <= target) return;
      if (record.status !== "PROCESSING") this.records.delete(key);
    }
    if (this.records.size >= this.maxRecords) {
      throw new Error(`MemoryStore is full: ${this.maxRecords} executions are in progress.`);
    }
  }

  private evictExpired(): void {
    let earliest = Infinity;
    for (const [key, record] of this.records) {
      if (!this.isLive(record)) this.records.delete(key);
      else earliest = Math.min(earliest, record.expiresAt.getTime());
    }
    this.earliestExpiry = earliest;
  }
}

function id({ operation, userId, key }: IdempotencyScope): string {
  return JSON.stringify([operation, userId, key]);
}
