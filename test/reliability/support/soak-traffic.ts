// The soak's client population: fresh keys, retries, conflicting reuses and concurrent duplicates, seeded.
import type { HttpAnswer } from "./http-client";

/** Retries only pick keys this young, well inside the worker's TTL, so an expired key is never retried. */
export const RETRY_WINDOW_MS = 10_000;

export type SoakRequest = { key: string; body: { amount: number; holdMs: number }; kind: "fresh" | "retry" | "conflict" | "duplicate" };
type Known = { key: string; body: SoakRequest["body"]; firstAt: number };

/** mulberry32: a small seeded generator, so a failing soak can be replayed with RELIABILITY_SOAK_SEED. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class SoakTraffic {
  private readonly recent: Known[] = [];
  private fresh = 0;
  /** Every answer per key, to check that all of a key's 2xx answers carry the same bytes. */
  readonly answers = new Map<string, HttpAnswer[]>();

  constructor(private readonly random: () => number) {}

  /** The next batch one client lane sends at once (several only for concurrent duplicates). */
  next(): SoakRequest[] {
    const roll = this.random();
    const old = this.pickRecent();
    if (roll < 0.25 && old) return [{ key: old.key, body: old.body, kind: "retry" }];
    if (roll < 0.35 && old) return [{ key: old.key, body: { ...old.body, amount: old.body.amount + 1 }, kind: "conflict" }];
    const known = this.remember();
    if (roll < 0.45) return [0, 1, 2].map(() => ({ key: known.key, body: known.body, kind: "duplicate" as const }));
    return [{ key: known.key, body: known.body, kind: "fresh" }];
  }

  record(key: string, answer: HttpAnswer): void {
    const list = this.answers.get(key) ?? [];
    list.push(answer);
    this.answers.set(key, list);
  }

  private remember(): Known {
    const n = this.fresh++;
    const known = { key: `soak-${n}`, body: { amount: n, holdMs: Math.floor(this.random() * 30) }, firstAt: performance.now() };
    this.recent.push(known);
    return known;
  }

  private pickRecent(): Known | undefined {
    const horizon = performance.now() - RETRY_WINDOW_MS;
    while (this.recent.length > 0 && this.recent[0]!.firstAt < horizon) this.recent.shift();
    if (this.recent.length === 0) return undefined;
    return this.recent[Math.floor(this.random() * this.recent.length)];
  }
}
