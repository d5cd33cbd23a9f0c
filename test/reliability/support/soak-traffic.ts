// The soak's client population: fresh keys, retries, conflicting reuses and concurrent duplicates, seeded.
import type { HttpAnswer } from "./http-client";

/** Retries only pick keys this young, well inside the worker's TTL, so an expired key is never retried. */
export const RETRY_WINDOW_MS = 10_000;

export type SoakRequest = {
  key: string;
  path: string;
  body: { amount: number; holdMs: number };
  kind: "fresh" | "retry" | "conflict" | "duplicate";
};
type Known = Omit<SoakRequest, "kind"> & { firstAt: number };
/** Long enough to outlive the worker's recovery timeout several times over: only the heartbeat keeps it. */
export const LONG_HOLD_MS = 7_000;

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
  /** Keys whose execution holds for LONG_HOLD_MS. */
  longHolds = 0;
  /** Every answer per key, to check that all of a key's 2xx answers carry the same bytes. */
  readonly answers = new Map<string, HttpAnswer[]>();

  private readonly random: () => number;

  constructor(random: () => number) {
    this.random = random;
  }

  /** The next batch one client lane sends at once (several only for concurrent duplicates). */
  next(): SoakRequest[] {
    const roll = this.random();
    const old = this.pickRecent();
    if (roll < 0.25 && old) return [{ ...old, kind: "retry" }];
    if (roll < 0.35 && old) return [{ ...old, body: { ...old.body, amount: old.body.amount + 1 }, kind: "conflict" }];
    const known = this.remember();
    if (roll < 0.45) return [0, 1, 2].map(() => ({ ...known, kind: "duplicate" as const }));
    return [{ ...known, kind: "fresh" }];
  }

  record(key: string, answer: HttpAnswer): void {
    const list = this.answers.get(key) ?? [];
    list.push(answer);
    this.answers.set(key, list);
  }

  private remember(): Known {
    const n = this.fresh++;
    // Half the keys on each adapter style; one execution in a hundred runs long.
    const holdMs = this.random() < 0.01 ? LONG_HOLD_MS : Math.floor(this.random() * 30);
    if (holdMs === LONG_HOLD_MS) this.longHolds++;
    const known = {
      key: `soak-${n}`,
      path: n % 2 === 0 ? "/payments" : "/captured",
      body: { amount: n, holdMs },
      firstAt: performance.now(),
    };
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
