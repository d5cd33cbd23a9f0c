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
export class MemoryRateLimitStore implements RateLimitStore {
  // Insertion order is write order (every write re-inserts), so the first entries are the stalest.
  private readonly tats = new Map<string, number>();
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
    const stored = this.tats.get(key);
    const decision = gcraStep(stored, now, rate);
    // A refusal writes only a TAT clamped after a clock step back, so the next interval is free again.
    if (decision.allowed || (stored !== undefined && decision.tat < stored)) {
      this.tats.delete(key);
      this.tats.set(key, decision.tat);
      if (this.tats.size > this.maxKeys) this.tats.delete(this.tats.keys().next().value as string);
    }
    return decision;
  }

  /** Keys currently held (those whose quota is not yet whole again, plus some not yet swept). */
  get size(): number {
    return this.tats.size;
  }

  /** Drops a few of the stalest keys whose debt is paid: forgetting them changes no decision. */
  private sweep(now: number): void {
    let budget = 4;
    for (const [key, tat] of this.tats) {
      if (tat > now || budget-- === 0) return;
      this.tats.delete(key);
    }
  }
}
