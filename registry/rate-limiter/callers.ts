// What this process holds for each caller, in one entry: its store calls still waiting (the in-flight bound) and the
// insurance limiter's count, the policy applied in memory; a decision looks its caller up once, not once for each.
import { gcraStep } from "./gcra";
import type { GcraRate, StoreDecision } from "./types";

/**
 * `pending`: cost units of store calls waiting. `tat`: the insurance's theoretical arrival time (µs),
 * NO_COUNT while it counts nothing for the caller; a caller with a count is linked in write order.
 * `held`: in the table (a caller whose calls are answered and whose count lapsed can be dropped).
 */
export type Caller = {
  readonly key: string;
  pending: number;
  tat: number;
  older: Caller | undefined;
  newer: Caller | undefined;
  held: boolean;
};

const NO_COUNT = -1;
/** How long (µs) a count whose quota is whole again is kept before a sweep may drop it. */
const SWEEP_GRACE_US = 1_000_000;
/** Callers with nothing waiting and no count kept between their requests before they are dropped together. */
const MAX_IDLE = 10_000;

/**
 * Two bounds, as a separate in-flight table and an insurance MemoryRateLimitStore would keep them:
 * at most `maxCounts` counts (past it the one written longest ago is forgotten, which can only
 * loosen that caller's limit), and callers idle on both sides are dropped together once the table
 * passes MAX_IDLE (or twice its size after the last walk). A caller with calls waiting is never
 * dropped: its bound would start again from zero.
 */
export class Callers {
  private readonly entries = new Map<string, Caller>();
  private oldest: Caller | undefined;
  private newest: Caller | undefined;
  /** `oldest.tat`, kept here: the sweep on every count reads it without touching the oldest caller. */
  private oldestTat = Infinity;
  private counts = 0;
  private pruneAt = MAX_IDLE;
  private readonly maxCounts: number;
  private readonly now: () => number;

  constructor(maxCounts = 100_000, now: () => number = Date.now) {
    this.maxCounts = maxCounts;
    this.now = now;
  }

  /**
   * `cost` more units of store calls for `key`'s caller, unless more than `max` would then wait:
   * the caller (one lookup), to hand to `release` and `insure` when the store answers.
   */
  take(key: string, cost: number, max: number): Caller | undefined {
    const caller = this.entries.get(key);
    if (caller !== undefined) {
      if (caller.pending + cost > max) return undefined;
      caller.pending += cost;
      return caller;
    }
    if (cost > max) return undefined;
    const added: Caller = { key, pending: cost, tat: NO_COUNT, older: undefined, newer: undefined, held: false };
    this.hold(added);
    return added;
  }

  /** The store answered (in time or not): the caller's units are free again. */
  release(caller: Caller, cost: number): void {
    caller.pending -= cost;
  }

  /**
   * The insurance's step for the caller, as MemoryRateLimitStore.takeNow takes it for a key: GCRA
   * on its count, on this process's clock; an allowed step is written, a refusal only when the
   * count came back clamped after a clock step back.
   */
  insure(caller: Caller, rate: GcraRate): StoreDecision {
    const now = Math.floor(this.now() * 1000);
    this.sweep(now);
    const counted = caller.tat !== NO_COUNT;
    const decision = gcraStep(counted ? caller.tat : undefined, now, rate);
    if (counted ? decision.allowed || decision.tat < caller.tat : decision.allowed) {
      if (!caller.held) this.hold(caller);
      if (counted) this.unlink(caller);
      caller.tat = decision.tat;
      this.link(caller);
    }
    return decision;
  }

  /** Callers in the table (with calls waiting, a count, or idle until the next walk). */
  get size(): number {
    return this.entries.size;
  }

  /** Drops a few of the stalest counts whose debt was paid more than a second ago: forgetting them changes no decision. */
  private sweep(now: number): void {
    let budget = 4;
    while (this.oldest !== undefined && this.oldestTat + SWEEP_GRACE_US <= now && budget-- > 0)
      this.forget(this.oldest);
  }

  private hold(caller: Caller): void {
    if (this.entries.size >= this.pruneAt) {
      for (const [key, held] of this.entries) {
        if (held.pending <= 0 && held.tat === NO_COUNT) {
          held.held = false;
          this.entries.delete(key);
        }
      }
      // As many callers busy at once: the next walk waits until there are twice as many.
      this.pruneAt = Math.max(MAX_IDLE, this.entries.size * 2);
    }
    caller.held = true;
    this.entries.set(caller.key, caller);
  }

  /** The caller's count is dropped; the caller too, unless calls of its are waiting. */
  private forget(caller: Caller): void {
    this.unlink(caller);
    caller.tat = NO_COUNT;
    if (caller.pending <= 0 && caller.held) {
      caller.held = false;
      this.entries.delete(caller.key);
    }
  }

  /** Adds a counted caller at the newest end; past maxCounts the one written longest ago is forgotten. */
  private link(caller: Caller): void {
    caller.older = this.newest;
    caller.newer = undefined;
    if (this.newest) this.newest.newer = caller;
    else {
      this.oldest = caller;
      this.oldestTat = caller.tat;
    }
    this.newest = caller;
    if (++this.counts > this.maxCounts && this.oldest) this.forget(this.oldest);
  }

  private unlink(caller: Caller): void {
    if (caller.older) caller.older.newer = caller.newer;
    else {
      this.oldest = caller.newer;
      this.oldestTat = caller.newer === undefined ? Infinity : caller.newer.tat;
    }
    if (caller.newer) caller.newer.older = caller.older;
    else this.newest = caller.older;
    caller.older = caller.newer = undefined;
    this.counts--;
  }
}
