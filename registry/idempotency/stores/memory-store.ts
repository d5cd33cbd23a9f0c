// MemoryStore: the IdempotencyStore contract in one process's memory, for development and tests.
import type {
  CreateInput,
  CreateResult,
  IdempotencyRecord,
  IdempotencyScope,
  IdempotencyStore,
  RecoveredRecord,
  RecoverInput,
  StepResults,
} from "../types";
import { warnOnce } from "../utils/warn-once";

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

/** The retry counter, and beside it the steps of the request hash that last recorded one (they outlive the record too). */
type Counter = { count: number; expiresAt: number; userId: string; requestHash?: string | undefined; steps?: Record<string, string> | undefined };

const NO_STEPS: StepResults = Object.freeze({});

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
  private readonly records = new Map<string, IdempotencyRecord>();
  private readonly counters = new Map<string, Counter>();
  /** Which records and counters each user holds, oldest first: eviction takes from the biggest holder. */
  private readonly recordsByUser = new Owners();
  private readonly countersByUser = new Owners();
  private readonly maxRecords: number;
  private readonly maxInProgressPerUser: number;
  /** PROCESSING records per user, for every user holding any record (at 0 it stays: deleting and re-adding a Map entry per request costs microseconds). */
  private readonly inProgress = new Map<string, number>();
  private readonly now: () => number;
  /** No record expires before this instant, so a full store skips the sweep for expired records until then. */
  private earliestExpiry = Infinity;

  constructor(options: MemoryStoreOptions = {}) {
    this.maxRecords = options.maxRecords ?? 10_000;
    this.maxInProgressPerUser = options.maxInProgressPerUser ?? Math.max(1, Math.floor(this.maxRecords / 100));
    if (!(this.maxInProgressPerUser >= 1)) {
      throw new RangeError(`MemoryStore: maxInProgressPerUser must be at least 1, got ${options.maxInProgressPerUser}.`);
    }
    this.now = options.now ?? Date.now;
    if (process.env.NODE_ENV === "production") {
      warnOnce("idempotency: MemoryStore is for development and tests: its records live in one process and vanish on restart, so retries that reach another instance run again. Use PostgresStore in production.");
    }
  }

  create(input: CreateInput): Promise<CreateResult> {
    // A full store throws: as a rejection, like any other store's refusal.
    return new Promise((resolve) => resolve(this.insert(input)));
  }

  private insert({ scope, requestHash, ttlMs, token }: CreateInput): CreateResult {
    const recordId = id(scope);
    const existing = this.records.get(recordId);
    if (existing && this.isLive(existing)) return { status: "DUPLICATE", record: { ...existing } };
    if (existing) this.drop(recordId, existing);
    const held = this.inProgress.get(scope.userId) ?? 0;
    if (held >= this.maxInProgressPerUser && this.heldAfterExpiry(scope.userId) >= this.maxInProgressPerUser) {
      throw new Error(
        `MemoryStore: this user already has ${this.maxInProgressPerUser} requests in progress (maxInProgressPerUser); their new keys are refused until some finish, other users' are not.`,
      );
    }
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
    this.recordsByUser.add(scope.userId, recordId);
    this.inProgress.set(scope.userId, (this.inProgress.get(scope.userId) ?? 0) + 1);
    return { status: "CREATED", steps: this.stepsOf(recordId, requestHash) };
  }

  get(scope: IdempotencyScope): Promise<IdempotencyRecord | undefined> {
    const record = this.live(scope);
    return Promise.resolve(record && { ...record, steps: this.stepsOf(id(scope), record.requestHash) });
  }

  markStep(scope: IdempotencyScope, token: string, name: string, result: string, ttlMs: number): Promise<boolean> {
    return this.settle(scope, token, (record) => {
      const key = id(scope);
      const current = this.counters.get(key);
      const live = current && current.expiresAt > this.now() ? current : undefined;
      const steps = live?.requestHash === record.requestHash ? { ...live.steps } : {};
      steps[name] = result;
      this.counters.delete(key);
      this.counters.set(key, { count: live?.count ?? 0, expiresAt: this.now() + ttlMs, userId: scope.userId, requestHash: record.requestHash, steps });
      this.countersByUser.add(scope.userId, key);
    });
  }

  private stepsOf(recordId: string, requestHash: string): StepResults {
    const counter = this.counters.get(recordId);
    if (!counter?.steps || counter.requestHash !== requestHash || counter.expiresAt <= this.now()) return NO_STEPS;
    return { ...counter.steps };
  }

  markSuccess(scope: IdempotencyScope, token: string, response: string | null, ttlMs: number): Promise<boolean> {
    return this.settle(scope, token, (record) => this.complete(record, "SUCCESS", response, ttlMs));
  }

  markFailed(scope: IdempotencyScope, token: string, ttlMs: number, response: string | null = null): Promise<boolean> {
    return this.settle(scope, token, (record) => this.complete(record, "FAILED", response, ttlMs));
  }

  release(scope: IdempotencyScope, token: string): Promise<boolean> {
    return this.settle(scope, token, (record) => this.drop(id(scope), record));
  }

  heartbeat(scope: IdempotencyScope, token: string, ttlMs = 0): Promise<boolean> {
    return this.settle(scope, token, (record) => {
      const now = this.now();
      record.updatedAt = new Date(now);
      record.expiresAt = new Date(Math.max(record.expiresAt.getTime(), now + ttlMs));
    });
  }

  incrementRetryCount(scope: IdempotencyScope, ttlMs: number): Promise<number> {
    return Promise.resolve(this.bump(scope, ttlMs));
  }

  /** Synchronous, like every step of recovery, so two concurrent runs can never pick the same record. */
  recoverStuckRecords({ olderThanMs, limit, maxRetries, ttlMs }: RecoverInput): Promise<RecoveredRecord[]> {
    const cutoff = this.now() - olderThanMs;
    const stuck = [...this.records.values()]
      .filter((record) => record.status === "PROCESSING" && record.updatedAt.getTime() < cutoff && this.isLive(record))
      .sort((a, b) => a.updatedAt.getTime() - b.updatedAt.getTime())
      .slice(0, limit);
    const recovered = stuck.map((record) => {
      const retryCount = this.bump(record, ttlMs);
      const poisoned = retryCount >= maxRetries;
      if (poisoned) this.complete(record, "FAILED", record.response, ttlMs);
      else this.drop(id(record), record);
      return { operation: record.operation, userId: record.userId, key: record.key, retryCount, poisoned };
    });
    return Promise.resolve(recovered);
  }

  private bump(scope: IdempotencyScope, ttlMs: number): number {
    const key = id(scope);
    const current = this.counters.get(key);
    const count = current && current.expiresAt > this.now() ? current.count + 1 : 1;
    this.counters.delete(key);
    const steps = current && current.expiresAt > this.now() ? { requestHash: current.requestHash, steps: current.steps } : {};
    this.counters.set(key, { count, expiresAt: this.now() + ttlMs, userId: scope.userId, ...steps });
    this.countersByUser.add(scope.userId, key);
    if (this.counters.size > this.maxRecords) {
      // Forgetting a counter resets a key's retry budget: make the biggest holder pay, never a bystander.
      const victim = this.countersByUser.oldestOfBiggest(1, () => true);
      const [id] = victim?.ids ?? [];
      if (victim && id !== undefined) this.dropCounter(victim.owner, id);
    }
    return count;
  }

  private dropCounter(userId: string, key: string): void {
    this.counters.delete(key);
    this.countersByUser.remove(userId, key);
  }

  cleanupExpiredRecords({ limit }: { limit: number }): Promise<number> {
    let deleted = 0;
    for (const [key, record] of this.records) {
      if (deleted >= limit) break;
      if (!this.isLive(record)) {
        this.drop(key, record);
        deleted++;
      }
    }
    let countersDeleted = 0;
    for (const [key, counter] of this.counters) {
      if (countersDeleted >= limit) break;
      if (counter.expiresAt <= this.now()) {
        this.dropCounter(counter.userId, key);
        countersDeleted++;
      }
    }
    return Promise.resolve(deleted);
  }

  private settle(scope: IdempotencyScope, token: string, change: (record: IdempotencyRecord) => unknown): Promise<boolean> {
    const record = this.live(scope);
    if (!record || record.status !== "PROCESSING" || record.token !== token) return Promise.resolve(false);
    change(record);
    return Promise.resolve(true);
  }

  private live(scope: IdempotencyScope): IdempotencyRecord | undefined {
    const record = this.records.get(id(scope));
    return record && this.isLive(record) ? record : undefined;
  }

  private isLive(record: IdempotencyRecord): boolean {
    return record.expiresAt.getTime() > this.now();
  }

  /** Field by field, not `Object.assign(record, { ...stamp })`: this runs on every first request. */
  private complete(record: IdempotencyRecord, status: "SUCCESS" | "FAILED", response: string | null, ttlMs: number): void {
    const now = this.now();
    this.earliestExpiry = Math.min(this.earliestExpiry, now + ttlMs);
    if (record.status === "PROCESSING") this.finished(record.userId);
    record.status = status;
    record.response = response;
    record.updatedAt = new Date(now);
    record.expiresAt = new Date(now + ttlMs);
  }

  private drop(recordId: string, record: IdempotencyRecord): void {
    this.records.delete(recordId);
    this.recordsByUser.remove(record.userId, recordId);
    if (record.status === "PROCESSING") this.finished(record.userId);
    if (!this.recordsByUser.holds(record.userId)) this.inProgress.delete(record.userId);
  }

  private finished(userId: string): void {
    this.inProgress.set(userId, (this.inProgress.get(userId) ?? 1) - 1);
  }

  /** At the bound only: the user's expired in-progress records (a crash nobody recovered) stop counting. */
  private heldAfterExpiry(userId: string): number {
    for (const recordId of this.recordsByUser.of(userId)) {
      const record = this.records.get(recordId);
      if (record && !this.isLive(record)) this.drop(recordId, record);
    }
    return this.inProgress.get(userId) ?? 0;
  }

  /**
   * Evicts expired records first, then the oldest completed records of the user who holds the most:
   * under one user's flood, only that user's records go (a bystander's evicted record would let its
   * retry run again). Running executions are never evicted. It frees 1 % of the store at a time, in
   * one walk over the biggest holder's ids: a Map or Set keeps the slots of deleted entries until it
   * grows, and walking past them for every single eviction cost several microseconds per request.
   */
  private makeRoom(): void {
    if (this.records.size < this.maxRecords) return;
    if (this.now() >= this.earliestExpiry) this.evictExpired();
    const target = this.maxRecords - Math.max(1, Math.floor(this.maxRecords / 100));
    while (this.records.size > target) {
      const victims = this.recordsByUser.oldestOfBiggest(
        this.records.size - target,
        (recordId) => this.records.get(recordId)?.status !== "PROCESSING",
        // Sized by what can go: a user whose records are all in progress is never the one picked.
        (owner, held) => held - (this.inProgress.get(owner) ?? 0),
      );
      if (!victims) break;
      for (const recordId of victims.ids) this.drop(recordId, this.records.get(recordId) as IdempotencyRecord);
    }
    if (this.records.size >= this.maxRecords) {
      throw new Error(`MemoryStore is full: ${this.maxRecords} records, and the biggest holder's are all in progress.`);
    }
  }

  private evictExpired(): void {
    let earliest = Infinity;
    for (const [key, record] of this.records) {
      if (!this.isLive(record)) this.drop(key, record);
      else earliest = Math.min(earliest, record.expiresAt.getTime());
    }
    this.earliestExpiry = earliest;
  }
}

/** Ids grouped by the user who owns them, each group oldest first. */
class Owners {
  private readonly byOwner = new Map<string, Set<string>>();

  add(owner: string, id: string): void {
    const ids = this.byOwner.get(owner) ?? new Set<string>();
    ids.delete(id);
    ids.add(id);
    this.byOwner.set(owner, ids);
  }

  holds(owner: string): boolean {
    return this.byOwner.has(owner);
  }

  /** A copy: the caller may remove ids while it walks them. */
  of(owner: string): string[] {
    return [...(this.byOwner.get(owner) ?? [])];
  }

  remove(owner: string, id: string): void {
    const ids = this.byOwner.get(owner);
    if (ids?.delete(id) && ids.size === 0) this.byOwner.delete(owner);
  }

  /**
   * Up to `count` of the oldest ids that `evictable` accepts, all of the owner holding the most, and
   * never so many that it ends up holding fewer than the runner-up: the next call takes from whoever
   * is biggest then.
   */
  oldestOfBiggest(
    count: number,
    evictable: (id: string) => boolean,
    sizeOf: (owner: string, held: number) => number = (_, held) => held,
  ): { owner: string; ids: string[] } | undefined {
    let biggest: Set<string> | undefined;
    let owner = "";
    let biggestSize = 0;
    let runnerUp = 0;
    for (const [candidate, ids] of this.byOwner) {
      const size = sizeOf(candidate, ids.size);
      if (size > biggestSize) {
        runnerUp = biggestSize;
        [biggest, owner, biggestSize] = [ids, candidate, size];
      } else runnerUp = Math.max(runnerUp, size);
    }
    if (!biggest) return undefined;
    const take = Math.min(count, Math.max(1, biggestSize - runnerUp));
    const ids: string[] = [];
    for (const id of biggest) {
      if (ids.length === take) break;
      if (evictable(id)) ids.push(id);
    }
    return ids.length > 0 ? { owner, ids } : undefined;
  }
}

/** One string per scope, unambiguous (each name prefixed with its length), and cheaper than JSON of the three. */
function id({ operation, userId, key }: IdempotencyScope): string {
  return `${operation.length}:${operation}${userId.length}:${userId}${key}`;
}
