// MemoryRateLimitStore: GCRA in this process's memory, bounded; for one process, development and tests.
import { gcraStep } from "../gcra";
import type { GcraRate, RateLimitStore, StoreDecision } from "../types";

export type MemoryRateLimitStoreOptions = {
  /**
   * Keys kept at most. Past it the key written longest ago is forgotten, which can only loosen its
   * limit (a forgotten key starts with a full quota), never refuse anyone wrongly. @default 100_000
   */
  maxKeys?: number | undefined;
  /** The clock in ms (fractions count), for tests. @default Date.now */
  now?: (() => number) | undefined;
};

/**
 * Exact within one process: `take` reads and writes synchronously, so no other request can run in
 * between. Several processes each keep their own counts: use Redis or PostgreSQL there.
 *
 * @example
 * const limiter = new RateLimiter(new MemoryRateLimitStore(), { limit: 10, windowMs: 60_000 });
 */
/** How long (µs) a key whose quota is whole again is kept before a sweep may drop it. */
const SWEEP_GRACE_US = 1_000_000;

/** One key's TAT, linked in write order (oldest first). */
type Entry = { key: string; tat: number; older: Entry | undefined; newer: Entry | undefined };

export class MemoryRateLimitStore implements RateLimitStore {
  private readonly entries = new Map<string, Entry>();
  // Write order, kept as a list beside the map: re-inserting into a Map on every write (delete, then
  // set) cost several times the lookup itself, and every request the limiter allows writes here.
  private oldest: Entry | undefined;
  private newest: Entry | undefined;
  private readonly maxKeys: number;
  private readonly now: () => number;

  constructor(options: MemoryRateLimitStoreOptions = {}) {
    this.maxKeys = options.maxKeys ?? 100_000;
    this.now = options.now ?? Date.now;
  }

  take(key: string, rate: GcraRate): Promise<StoreDecision> {
    return Promise.resolve(this.takeNow(key, rate));
  }

  /** `take` without the promise: for callers in this process that need the answer at once (the limiter's insurance). */
  takeNow(key: string, rate: GcraRate): StoreDecision {
    const now = Math.floor(this.now() * 1000);
    this.sweep(now);
    const entry = this.entries.get(key);
    const decision = gcraStep(entry?.tat, now, rate);
    // A refusal writes only a TAT clamped after a clock step back, so the next interval is free again.
    if (entry === undefined) {
      if (decision.allowed) this.add(key, decision.tat);
    } else if (decision.allowed || decision.tat < entry.tat) {
      entry.tat = decision.tat;
      this.touch(entry);
    }
    return decision;
  }

  /** Keys currently held (those whose quota is not yet whole again, plus some not yet swept). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Drops a few of the stalest keys whose debt was paid more than a second ago: forgetting them
   * changes no decision. The second keeps a caller who comes back within it (a busy one, under a
   * policy whose interval is shorter) in its entry, rather than dropping and adding it each time.
   */
  private sweep(now: number): void {
    let budget = 4;
    while (this.oldest !== undefined && this.oldest.tat + SWEEP_GRACE_US <= now && budget-- > 0) this.drop(this.oldest);
  }

  private add(key: string, tat: number): void {
    const entry: Entry = { key, tat, older: this.newest, newer: undefined };
    if (this.newest) this.newest.newer = entry;
    else this.oldest = entry;
    this.newest = entry;
    this.entries.set(key, entry);
    if (this.entries.size > this.maxKeys && this.oldest) this.drop(this.oldest);
  }

  /** Moves a written entry to the newest end. */
  private touch(entry: Entry): void {
    if (entry === this.newest) return;
    this.unlink(entry);
    entry.older = this.newest;
    entry.newer = undefined;
    if (this.newest) this.newest.newer = entry;
    else this.oldest = entry;
    this.newest = entry;
  }

  private drop(entry: Entry): void {
    this.unlink(entry);
    this.entries.delete(entry.key);
  }

  private unlink(entry: Entry): void {
    if (entry.older) entry.older.newer = entry.newer;
    else this.oldest = entry.newer;
    if (entry.newer) entry.newer.older = entry.older;
    else this.newest = entry.older;
  }
}
