// MemoryStore's retry counters, and beside each the steps of the request hash that last recorded one: both outlive the record.
import type { StepResults } from "../types";
import { Owners } from "./memory-owners";

type Counter = {
  count: number;
  expiresAt: number;
  userId: string;
  requestHash?: string | undefined;
  steps?: Record<string, string> | undefined;
};

const NO_STEPS: StepResults = Object.freeze({});

/** Keyed by user, then the record's id among that user's; at most `maxCounters`, and a full store of them forgets the biggest holder's oldest counter. */
export class RetryCounters {
  /** Each user's counters, oldest write first. */
  private readonly counters = new Owners<Counter>();
  private readonly maxCounters: number;
  private readonly now: () => number;

  constructor(maxCounters: number, now: () => number) {
    this.maxCounters = maxCounters;
    this.now = now;
  }

  /** One more retry of the key; returns the new count. Its steps stay. */
  bump(recordId: string, userId: string, ttlMs: number): number {
    const current = this.live(userId, recordId);
    const count = (current?.count ?? 0) + 1;
    this.set(recordId, {
      count,
      expiresAt: this.now() + ttlMs,
      userId,
      requestHash: current?.requestHash,
      steps: current?.steps,
    });
    return count;
  }

  /** Records one step of the execution holding the key; steps of another request hash are dropped first. */
  recordStep(recordId: string, userId: string, requestHash: string, name: string, result: string, ttlMs: number): void {
    const current = this.live(userId, recordId);
    const steps = current?.requestHash === requestHash ? { ...current.steps } : {};
    steps[name] = result;
    this.set(recordId, { count: current?.count ?? 0, expiresAt: this.now() + ttlMs, userId, requestHash, steps });
  }

  /** A copy of the steps recorded under `requestHash`, if any. */
  stepsOf(userId: string, recordId: string, requestHash: string): StepResults {
    const counter = this.counters.get(userId, recordId);
    if (!counter?.steps || counter.requestHash !== requestHash || counter.expiresAt <= this.now()) return NO_STEPS;
    return { ...counter.steps };
  }

  /** Deletes up to `limit` expired counters. */
  cleanup(limit: number): void {
    let deleted = 0;
    for (const [userId, recordId, counter] of this.counters.all()) {
      if (deleted >= limit) break;
      if (counter.expiresAt <= this.now()) {
        this.counters.delete(userId, recordId);
        deleted++;
      }
    }
  }

  private live(userId: string, recordId: string): Counter | undefined {
    const current = this.counters.get(userId, recordId);
    return current && current.expiresAt > this.now() ? current : undefined;
  }

  /** Written last in its user's group, so the counters stay oldest write first. */
  private set(recordId: string, counter: Counter): void {
    this.counters.set(counter.userId, recordId, counter);
    if (this.counters.size > this.maxCounters) {
      // Forgetting a counter resets a key's retry budget: make the biggest holder pay, never a bystander.
      const victim = this.counters.oldestOfBiggest(1, () => true);
      const [oldest] = victim?.entries ?? [];
      if (victim && oldest) this.counters.delete(victim.owner, oldest[0]);
    }
  }
}
