import { describe, expect, it } from "vitest";
import { Callers } from "./callers";
import { rateOf } from "./gcra";

const rate = rateOf({ name: "p", limit: 2, windowMs: 1_000 });

/** One request of `key` the store allowed: its call taken, answered, then shadowed by the insurance. */
function admit(callers: Callers, key: string) {
  const caller = callers.take(key, 1, 10);
  if (!caller) throw new Error(`${key}: refused by the in-flight bound`);
  callers.release(caller, 1);
  return callers.insure(caller, rate);
}

describe("Callers: the in-flight bound and the insurance's counts in one table", () => {
  it("counts as the insurance's memory store does: a limit per window, each caller apart", () => {
    const callers = new Callers(100, () => 0);
    expect([admit(callers, "a"), admit(callers, "a"), admit(callers, "a")].map((d) => d.allowed)).toEqual([
      true,
      true,
      false,
    ]);
    expect(admit(callers, "b").allowed).toBe(true);
  });

  it("forgets counts whose quota came back more than a second ago, and the callers with nothing waiting", () => {
    let now = 0;
    const callers = new Callers(100, () => now);
    for (const key of ["a", "b", "c"]) admit(callers, key);
    now = 1_400;
    admit(callers, "busy");
    expect(callers.size).toBe(4);
    now = 10_000;
    admit(callers, "busy");
    expect(callers.size).toBe(1);
  });

  it("past maxCounts forgets the count written longest ago, not the one added first", () => {
    const callers = new Callers(2, () => 0);
    admit(callers, "a");
    admit(callers, "b");
    admit(callers, "a"); // "a" is written again: "b" is now the stalest
    admit(callers, "c");
    // "a" kept its count (limit 2, both taken), "b" starts again with a full quota.
    expect(admit(callers, "a").allowed).toBe(false);
    expect(admit(callers, "b").allowed).toBe(true);
  });

  it("keeps a caller whose calls are waiting when its count is forgotten: its bound does not start again", () => {
    let now = 0;
    const callers = new Callers(1, () => now);
    admit(callers, "slow");
    const waiting = callers.take("slow", 1, 1);
    expect(waiting).toBeDefined();
    admit(callers, "other"); // past maxCounts: "slow"'s count goes, its waiting call stays
    now = 10_000;
    admit(callers, "third"); // the sweep finds nothing of "slow" to drop either
    expect(callers.take("slow", 1, 1)).toBeUndefined();
    callers.release(waiting!, 1);
    expect(callers.take("slow", 1, 1)).toBeDefined();
  });

  it("refuses more waiting units than the bound, without adding a caller for a call it refuses", () => {
    const callers = new Callers();
    expect(callers.take("k", 3, 2)).toBeUndefined();
    expect(callers.size).toBe(0);
    const first = callers.take("k", 2, 3);
    expect(first?.pending).toBe(2);
    expect(callers.take("k", 2, 3)).toBeUndefined();
    expect(callers.take("k", 1, 3)).toBe(first);
  });

  it("drops the idle callers together once there are many, never one with a call waiting or a count", () => {
    const callers = new Callers(100_000, () => 0);
    const waiting = callers.take("waiting", 1, 1);
    admit(callers, "counted");
    for (let i = 0; i < 10_050; i++) {
      const caller = callers.take(`idle_${i}`, 1, 1);
      callers.release(caller!, 1);
    }
    expect(callers.size).toBeLessThan(100);
    expect(callers.take("waiting", 1, 1)).toBeUndefined();
    expect(admit(callers, "counted").allowed).toBe(true);
    expect(admit(callers, "counted").allowed).toBe(false);
    expect(waiting?.pending).toBe(1);
  });
});
