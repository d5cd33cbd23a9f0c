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
import { warnOnce } from "../utils/warn-once";
import { RetryCounters } from "./memory-counters";
import { flat, handOut, recordId as id, type StoredRecord } from "./memory-record";
import { Owners } from "./memory-owners";

export type MemoryStoreOptions = {
  /**
   * Records kept at most. When full, expired records go first, then the oldest completed records
   * of the user who holds the most, so one user's flood of keys never evicts anyone else's. @default 10_000
   */
  maxRecords?: number;
  /**
   * Records one user may hold in progress (PROCESSING) at once; that user's next new key is refused
   * (STORE_UNAVAILABLE through the handler) until some finish, while other users carry on. Eviction
   * never takes a running execution, so without this bound one user's flood of in-progress keys
   * filled the store and every other user was refused. @default 1 % of maxRecords (at least 1)
   */
  maxInProgressPerUser?: number;
  /** The clock, in epoch milliseconds; tests pass a fake one. @default Date.now */
  now?: () => number;
};

/**
 * For development and tests: keeps records in a Map of this one process. Nothing is shared between
 * processes and everything is lost on restart, so a retry that reaches another instance (or comes
 * after a deploy) runs the operation again. Production uses PostgresStore; created with
 * NODE_ENV=production, this store warns once.
 *
 * @example
 * const handler = new IdempotencyHandler(new MemoryStore({ maxRecords: 1_000 }));
 */
export class MemoryStore implements IdempotencyStore {
  /** Each user's records, oldest first: eviction takes from the biggest holder. */
  private readonly records = new Owners<StoredRecord>();
  private readonly counters: RetryCounters;
  private readonly maxRecords: number;
  private readonly maxInProgressPerUser: number;
  /** PROCESSING records per user, for every user holding any record (at 0 it stays: deleting and re-adding a Map entry per request costs microseconds). */
  private readonly inProgress = new Map<string, number>();
  private readonly now: () => number;
  /** No record expires before this instant, so a full store skips the sweep for expired records until then. */
  private earliestExpiry = Infinity;
  /** The last scope given, the fields of it its id is made of as they were then, and its id: a first request's calls pass one scope object. */
  private lastScope: IdempotencyScope | undefined;
  private lastOperation = "";
  private lastKey = "";
  private lastId = "";

  constructor(options: MemoryStoreOptions = {}) {
    this.maxRecords = options.maxRecords ?? 10_000;
    this.maxInProgressPerUser = options.maxInProgressPerUser ?? Math.max(1, Math.floor(this.maxRecords / 100));
    if (!(this.maxInProgressPerUser >= 1)) {
      throw new RangeError(
        `MemoryStore: maxInProgressPerUser must be at least 1, got ${options.maxInProgressPerUser}.`,
      );
    }
    this.now = options.now ?? Date.now;
    this.counters = new RetryCounters(this.maxRecords, this.now);
    if (process.env.NODE_ENV === "production") {
      warnOnce(
        "idempotency: MemoryStore is for development and tests: its records live in one process and vanish on restart, so retries that reach another instance run again. Use PostgresStore in production.",
      );
    }
  }

  create(input: CreateInput): Promise<CreateResult> {
    // A full store throws: as a rejection, like any other store's refusal (and no closure per call for it).
    try {
      return Promise.resolve(this.insert(input));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private insert({ scope, requestHash, ttlMs, token }: CreateInput): CreateResult {
    const recordId = this.idOf(scope);
    const existing = this.records.get(scope.userId, recordId);
    // A replay reads the frozen record made at the first one: no copy, no dates made per call.
    if (existing && this.isLive(existing)) return { status: "DUPLICATE", record: handOut(existing) };
    if (existing) this.drop(recordId, existing);
    const held = this.inProgress.get(scope.userId) ?? 0;
    if (held >= this.maxInProgressPerUser && this.heldAfterExpiry(scope.userId) >= this.maxInProgressPerUser) {
      throw new Error(
        `MemoryStore: this user already has ${this.maxInProgressPerUser} requests in progress (maxInProgressPerUser); their new keys are refused until some finish, other users' are not.`,
      );
    }
    this.makeRoom();
    const now = this.now();
    this.earliestExpiry = Math.min(this.earliestExpiry, now + ttlMs);
    // Fields spelled out: spreading `scope` into a literal this size costs several microseconds per request.
    // New to its owner's group: any record it had was dropped above.
    this.records.append(scope.userId, recordId, {
      operation: scope.operation,
      userId: scope.userId,
      key: scope.key,
      requestHash,
      status: "PROCESSING",
      response: null,
      token: flat(token),
      expiresAt: now + ttlMs,
      updatedAt: now,
      view: undefined,
    });
    // Read again: the sweeps above may have dropped this user's expired in-progress records.
    this.inProgress.set(scope.userId, (this.inProgress.get(scope.userId) ?? 0) + 1);
    return { status: "CREATED", steps: this.counters.stepsOf(scope.userId, recordId, requestHash) };
  }

  get(scope: IdempotencyScope): Promise<IdempotencyRecord | undefined> {
    const record = this.live(scope);
    return Promise.resolve(
      record && {
        ...handOut(record),
        steps: this.counters.stepsOf(scope.userId, this.idOf(scope), record.requestHash),
      },
    );
  }

  markStep(scope: IdempotencyScope, token: string, name: string, result: string, ttlMs: number): Promise<boolean> {
    return this.settle(scope, token, (record, recordId) =>
      this.counters.recordStep(recordId, record.userId, record.requestHash, name, result, ttlMs),
    );
  }

  markSuccess(scope: IdempotencyScope, token: string, response: string | null, ttlMs: number): Promise<boolean> {
    return this.settle(scope, token, (record) => this.complete(record, "SUCCESS", response, ttlMs));
  }

  markFailed(scope: IdempotencyScope, token: string, ttlMs: number, response: string | null = null): Promise<boolean> {
    return this.settle(scope, token, (record) => this.complete(record, "FAILED", response, ttlMs));
  }

  release(scope: IdempotencyScope, token: string): Promise<boolean> {
    return this.settle(scope, token, (record, recordId) => this.drop(recordId, record));
  }

  heartbeat(scope: IdempotencyScope, token: string, ttlMs = 0): Promise<boolean> {
    return this.settle(scope, token, (record) => {
      const now = this.now();
      record.updatedAt = now;
      record.expiresAt = Math.max(record.expiresAt, now + ttlMs);
      record.view = undefined;
    });
  }

  incrementRetryCount(scope: IdempotencyScope, ttlMs: number): Promise<number> {
    return Promise.resolve(this.counters.bump(this.idOf(scope), scope.userId, ttlMs));
  }

  /** Synchronous, like every step of recovery, so two concurrent runs can never pick the same record. */
  recoverStuckRecords({ olderThanMs, limit, maxRetries, ttlMs }: RecoverInput): Promise<RecoveredRecord[]> {
    const cutoff = this.now() - olderThanMs;
    const stuck = [...this.records.all()]
      .filter(([, , record]) => record.status === "PROCESSING" && record.updatedAt < cutoff && this.isLive(record))
      .sort(([, , a], [, , b]) => a.updatedAt - b.updatedAt)
      .slice(0, limit);
    const recovered = stuck.map(([, recordId, record]) => {
      const retryCount = this.counters.bump(recordId, record.userId, ttlMs);
      const poisoned = retryCount >= maxRetries;
      if (poisoned) this.complete(record, "FAILED", record.response, ttlMs);
      else this.drop(recordId, record);
      return { operation: record.operation, userId: record.userId, key: record.key, retryCount, poisoned };
    });
    return Promise.resolve(recovered);
  }

  cleanupExpiredRecords({ limit }: { limit: number }): Promise<number> {
    let deleted = 0;
    for (const [, recordId, record] of this.records.all()) {
      if (deleted >= limit) break;
      if (!this.isLive(record)) {
        this.drop(recordId, record);
        deleted++;
      }
    }
    this.counters.cleanup(limit);
    return Promise.resolve(deleted);
  }

  /** Changes the live PROCESSING record of `scope` held by `token`, if there is one. */
  private settle(
    scope: IdempotencyScope,
    token: string,
    change: (record: StoredRecord, recordId: string) => unknown,
  ): Promise<boolean> {
    const recordId = this.idOf(scope);
    const record = this.records.get(scope.userId, recordId);
    if (!record || !this.isLive(record) || record.status !== "PROCESSING" || record.token !== token)
      return Promise.resolve(false);
    change(record, recordId);
    return Promise.resolve(true);
  }

  /**
   * The id of `scope` among its user's records, made once for the scope object a request passes to each
   * of its calls (joining and hashing a new string per call cost more than the Map lookup it is for). The
   * fields are compared too, so a scope object changed between two calls gets the id of what it holds now.
   */
  private idOf(scope: IdempotencyScope): string {
    const { operation, key } = scope;
    if (this.lastScope === scope && this.lastOperation === operation && this.lastKey === key) return this.lastId;
    this.lastScope = scope;
    this.lastOperation = operation;
    this.lastKey = key;
    this.lastId = id(scope);
    return this.lastId;
  }

  private live(scope: IdempotencyScope): StoredRecord | undefined {
    const record = this.records.get(scope.userId, this.idOf(scope));
    return record && this.isLive(record) ? record : undefined;
  }

  private isLive(record: StoredRecord): boolean {
    return record.expiresAt > this.now();
  }

  /** Field by field, not `Object.assign(record, { ...stamp })`: this runs on every first request. */
  private complete(record: StoredRecord, status: "SUCCESS" | "FAILED", response: string | null, ttlMs: number): void {
    const now = this.now();
    this.earliestExpiry = Math.min(this.earliestExpiry, now + ttlMs);
    if (record.status === "PROCESSING") this.finished(record.userId);
    record.status = status;
    // Flat: `JSON.stringify` builds a text this long as a tree of parts, which the record would keep for its whole life.
    record.response = response === null ? null : flat(response);
    record.updatedAt = now;
    record.expiresAt = now + ttlMs;
    record.view = undefined;
  }

  private drop(recordId: string, record: StoredRecord): void {
    this.records.delete(record.userId, recordId);
    if (record.status === "PROCESSING") this.finished(record.userId);
    if (!this.records.holds(record.userId)) this.inProgress.delete(record.userId);
  }

  private finished(userId: string): void {
    this.inProgress.set(userId, (this.inProgress.get(userId) ?? 1) - 1);
  }

  /** At the bound only: the user's expired in-progress records (a crash nobody recovered) stop counting. */
  private heldAfterExpiry(userId: string): number {
    for (const [recordId, record] of this.records.of(userId)) if (!this.isLive(record)) this.drop(recordId, record);
    return this.inProgress.get(userId) ?? 0;
  }

  /**
   * Evicts expired records first, then the oldest completed records of the user who holds the most:
   * under one user's flood, only that user's records go (a bystander's evicted record would let its
   * retry run again). Running executions are never evicted. It frees 1 % of the store at a time, in
   * one walk over the biggest holder's records: a Map keeps the slots of deleted entries until it
   * grows, and walking past them for every single eviction cost several microseconds per request.
   */
  private makeRoom(): void {
    if (this.records.size < this.maxRecords) return;
    if (this.now() >= this.earliestExpiry) this.evictExpired();
    const target = this.maxRecords - Math.max(1, Math.floor(this.maxRecords / 100));
    while (this.records.size > target) {
      const victims = this.records.oldestOfBiggest(
        this.records.size - target,
        (record) => record.status !== "PROCESSING",
        // Sized by what can go: a user whose records are all in progress is never the one picked.
        (owner, held) => held - (this.inProgress.get(owner) ?? 0),
      );
      if (!victims) break;
      for (const [recordId, record] of victims.entries) this.drop(recordId, record);
    }
    if (this.records.size >= this.maxRecords) {
      throw new Error(`MemoryStore is full: ${this.maxRecords} records, and the biggest holder's are all in progress.`);
    }
  }

  private evictExpired(): void {
    let earliest = Infinity;
    for (const [, recordId, record] of this.records.all()) {
      if (!this.isLive(record)) this.drop(recordId, record);
      else earliest = Math.min(earliest, record.expiresAt);
    }
    this.earliestExpiry = earliest;
  }
}
