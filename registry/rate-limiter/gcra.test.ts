import { describe, expect, it } from "vitest";
import { checkPolicy, decisionOf, gcraStep, rateOf } from "./gcra";
import type { RateLimitPolicy } from "./types";

const policy: RateLimitPolicy = { name: "default", limit: 3, windowMs: 3_000 };
const rate = rateOf(policy);

/** Runs attempts at the given instants against one key, as a store would. */
function attempts(times: number[]) {
  let tat: number | undefined;
  return times.map((now) => {
    const answer = gcraStep(tat, now * 1000, rate);
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
    // The effective window: one more request comes back after one interval, whatever is left.
    expect([first?.nextMs, second?.nextMs, third?.nextMs]).toEqual([1_000, 1_000, 1_000]);
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

  it("rounds the interval up to the microsecond, so a policy is never looser than written", () => {
    expect(rateOf({ name: "p", limit: 7, windowMs: 1_000 })).toEqual({ intervalUs: 142_858, capacityUs: 1_000_006 });
  });
});

describe("findings of the adversarial review", () => {
  it("limit > windowMs: 2000 per second admits 2000 a second, not 1000 (sub-millisecond interval)", () => {
    const fast: RateLimitPolicy = { name: "p", limit: 2_000, windowMs: 1_000 };
    const fastRate = rateOf(fast);
    let tat: number | undefined;
    const admitted = (nowMs: number, n: number) => {
      let allowed = 0;
      for (let i = 0; i < n; i++) {
        const answer = gcraStep(tat, nowMs * 1000, fastRate);
        tat = answer.tat;
        if (answer.allowed) allowed++;
      }
      return allowed;
    };
    expect(admitted(0, 2_000)).toBe(2_000);
    expect(admitted(1_000, 2_500)).toBe(2_000);
    expect(admitted(1_250, 1_000)).toBe(500);
  });

  it("a backward clock step costs a key one interval, not the whole step", () => {
    // The key's TAT was written an hour ahead of the clock it now meets (the clock stepped back an hour).
    const hourAhead = 3_600_000_000;
    const refused = gcraStep(hourAhead, 0, rate);
    expect(refused).toEqual({ allowed: false, tat: rate.capacityUs, now: 0 });
    expect(decisionOf(policy, rate, refused).retryAfterMs).toBe(1_000);
    expect(gcraStep(refused.tat, rate.intervalUs, rate).allowed).toBe(true);
  });

  it("refuses rates finer than one request per microsecond and windows past a year", () => {
    expect(() => checkPolicy({ name: "p", limit: 1_001, windowMs: 1 })).toThrow(/at most one request per microsecond/);
    expect(() => checkPolicy({ name: "p", limit: 1, windowMs: 400 * 86_400_000 })).toThrow(/Invalid windowMs/);
  });
});
