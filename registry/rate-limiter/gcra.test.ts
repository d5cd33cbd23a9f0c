import { describe, expect, it } from "vitest";
import { decisionOf, gcraStep, rateOf } from "./gcra";
import type { RateLimitPolicy } from "./types";

const policy: RateLimitPolicy = { name: "default", limit: 3, windowMs: 3_000 };
const rate = rateOf(policy);

/** Runs attempts at the given instants against one key, as a store would. */
function attempts(times: number[]) {
  let tat: number | undefined;
  return times.map((now) => {
    const answer = gcraStep(tat, now, rate);
    tat = answer.tat;
    return decisionOf(policy, rate, answer);
  });
}

describe("GCRA", () => {
  it("allows a burst of exactly `limit`, then refuses", () => {
    expect(attempts([0, 0, 0, 0, 0]).map((d) => d.allowed)).toEqual([true, true, true, false, false]);
  });

  it("counts down `remaining` and reports when the quota is whole again", () => {
    const [first, second, third] = attempts([0, 0, 0]);
    expect([first?.remaining, second?.remaining, third?.remaining]).toEqual([2, 1, 0]);
    expect(third?.resetMs).toBe(3_000);
  });

  it("tells a refused request exactly when the next one fits, and that one is allowed", () => {
    const decisions = attempts([0, 0, 0, 400, 1_000]);
    expect(decisions[3]).toMatchObject({ allowed: false, retryAfterMs: 600, remaining: 0 });
    expect(decisions[4]).toMatchObject({ allowed: true, remaining: 0 });
  });

  it("refills one request per interval, never above the limit", () => {
    const decisions = attempts([0, 0, 0, 2_000, 2_000, 2_000, 100_000]);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false, true]);
    expect(decisions[6]?.remaining).toBe(2);
  });

  it("has no window edge: a full burst just before and after a boundary is not twice the limit", () => {
    const decisions = attempts([2_999, 2_999, 2_999, 3_001, 3_001, 3_001]);
    expect(decisions.filter((d) => d.allowed)).toHaveLength(3);
  });

  it("rounds the interval up, so a policy is never looser than written", () => {
    expect(rateOf({ name: "p", limit: 7, windowMs: 1_000 })).toEqual({ intervalMs: 143, capacityMs: 1_001 });
  });
});
