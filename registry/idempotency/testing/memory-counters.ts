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

/** Keyed by the record's id; at most `maxCounters`, and a full map forgets the biggest holder's oldest counter. */
export class RetryCounters {
  private readonly counters = new Map<string, Counter>();
  private readonly byUser = new Owners();
  private readonly maxCounters: number;
  private readonly now: () => number;

  constructor(maxCounters: number, now: () => number) {
    this.maxCounters = maxCounters;
    this.now = now;
  }

  /** One more retry of the key; returns the new count. Its steps stay. */
  bump(recordId: string, userId: string, ttlMs: number): number {
    const current = this.live(recordId);
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
    const current = this.live(recordId);
    const steps = current?.requestHash === requestHash ? { ...current.steps } : {};
    steps[name] = result;
    this.set(recordId, { count: current?.count ?? 0, expiresAt: this.now() + ttlMs, userId, requestHash, steps });
  }

  /** A copy of the steps recorded under `requestHash`, if any. */
  stepsOf(recordId: string, requestHash: string): StepResults {
    const counter = this.counters.get(recordId);
    if (!counter?.steps || counter.requestHash !== requestHash || counter.expiresAt <= this.now()) return NO_STEPS;
    return { ...counter.steps };
  }

  /** Deletes up to `limit` expired counters. */
  cleanup(limit: number): void {
    let deleted = 0;
    for (const [recordId, counter] of this.counters) {
      if (deleted >= limit) break;
      if (counter.expiresAt <= this.now()) {
        this.drop(counter.userId, recordId);
        deleted++;
      }
    }
  }

  private live(recordId: string): Counter | undefined {
    const current = this.counters.get(recordId);
    return current && current.expiresAt > this.now() ? current : undefined;
  }

  /** Deleted and set again, so the map keeps its counters oldest write first. */
  private set(recordId: string, counter: Counter): void {
    this.counters.delete(recordId);
    this.counters.set(recordId, counter);
    this.byUser.add(counter.userId, recordId);
    if (this.counters.size > this.maxCounters) {
      // Forgetting a counter resets a key's retry budget: make the biggest holder pay, never a bystander.
      const victim = this.byUser.oldestOfBiggest(1, () => true);
      const [oldest] = victim?.ids ?? [];
      if (victim && oldest !== undefined) this.drop(victim.owner, oldest);
    }
  }

  private drop(userId: string, recordId: string): void {
    this.counters.delete(recordId);
    this.byUser.remove(userId, recordId);
  }
}
