// Which Idempotency-Key each request of a run carries: all fresh, all replays, or 10 % replays.

export type LoadMode = "fresh" | "replay" | "mixed";

export const LOAD_MODES: Record<LoadMode, string> = {
  fresh: "all fresh keys",
  replay: "all replays",
  mixed: "10% replays",
};

/** The same body for every key, so a replay is never a key reused with a different payload. */
export const PAYMENT_BODY = JSON.stringify({ amount: 1000, currency: "EUR" });

export type LoadPlan = { mode: LoadMode; keyPrefix: string; replayKeys: number };

/** Keys that a replay run primes first; unique per run through the prefix. */
export function replayKey(plan: LoadPlan, index: number): string {
  return `${plan.keyPrefix}-r-${index % plan.replayKeys}`;
}

/** Returns a generator of keys for the run (bounded by the caller's duration, not by itself). */
export function keySequence(plan: LoadPlan): () => string {
  let n = 0;
  return function nextKey() {
    n++;
    if (plan.mode === "replay" || (plan.mode === "mixed" && n % 10 === 0)) return replayKey(plan, n);
    return `${plan.keyPrefix}-f-${n}`;
  };
}
