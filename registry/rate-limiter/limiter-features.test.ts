// Cost, per-caller limits, the block cache and bans, on the in-memory store (test/rate-limiter runs them on every store).
import { describe, expect, it } from "vitest";
import { RateLimiter } from "./limiter";
import { MemoryRateLimitStore } from "./stores/memory-store";
import { recordingMetrics } from "./testing/recorders";
import type { RateLimitDecision, RateLimitStore } from "./types";

/** The memory store, counting the calls that reach it. */
function countingStore(): RateLimitStore & { calls: number } {
  const memory = new MemoryRateLimitStore();
  const store = {
    calls: 0,
    take: (key: string, rate: Parameters<RateLimitStore["take"]>[1]) => {
      store.calls++;
      return memory.take(key, rate);
    },
  };
  return store;
}

describe("RateLimiter features", () => {
  it("cost: a request takes `cost` units of the quota, and says how long until that many fit", async () => {
    const limiter = new RateLimiter(new MemoryRateLimitStore(), { limit: 10, windowMs: 10_000 });
    expect(await limiter.check("u_1", { cost: 4 })).toMatchObject({ allowed: true, remaining: 6 });
    expect(await limiter.check("u_1", { cost: 6 })).toMatchObject({ allowed: true, remaining: 0 });
    const refused = await limiter.check("u_1", { cost: 3 });
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfterMs).toBeGreaterThan(2_900);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(3_000);
    await expect(limiter.check("u_1", { cost: 11 })).rejects.toThrow(
      /cost 11 must be an integer from 1 to the limit \(10\)/,
    );
  });

  it("limit per caller: each check may carry its own limit; the headers' policy follows it", async () => {
    const limiter = new RateLimiter(new MemoryRateLimitStore(), { name: "api", limit: 2, windowMs: 60_000 });
    const gold: boolean[] = [];
    for (let i = 0; i < 6; i++) gold.push((await limiter.check("gold", { limit: 5 })).allowed);
    expect(gold).toEqual([true, true, true, true, true, false]);
    expect((await limiter.check("free")).policy).toEqual({ name: "api", limit: 2, windowMs: 60_000 });
    expect((await limiter.check("gold2", { limit: 5 })).policy.limit).toBe(5);
    await expect(limiter.check("x", { limit: 0 })).rejects.toThrow(/Invalid rate limit 0/);
  });

  it("block cache: a caller refused until T costs no store round trip until T", async () => {
    const store = countingStore();
    const metrics = recordingMetrics();
    const limiter = new RateLimiter(store, { limit: 2, windowMs: 200, metrics });
    for (let i = 0; i < 3; i++) await limiter.check("u_1");
    expect(store.calls).toBe(3);
    const blocked = await limiter.check("u_1");
    expect(blocked).toMatchObject({ allowed: false });
    for (let i = 0; i < 20; i++) await limiter.check("u_1");
    expect(store.calls).toBe(3);
    expect(metrics.count("decisions", { policy: "default", outcome: "block_cached" })).toBe(21);
    await new Promise((resolve) => setTimeout(resolve, blocked.retryAfterMs + 10));
    expect((await limiter.check("u_1")).allowed).toBe(true);
    expect(store.calls).toBe(4);
  });

  it("blockCache: false sends every refused request to the store", async () => {
    const store = countingStore();
    const limiter = new RateLimiter(store, { limit: 1, windowMs: 60_000, blockCache: false });
    for (let i = 0; i < 5; i++) await limiter.check("u_1");
    expect(store.calls).toBe(5);
  });

  it("ban: after `after` refusals within `withinMs`, RATE_LIMIT_BANNED (403) for `forMs`, with no store call", async () => {
    const store = countingStore();
    const metrics = recordingMetrics();
    const limiter = new RateLimiter(store, {
      limit: 1,
      windowMs: 60_000,
      ban: { after: 3, withinMs: 60_000, forMs: 150 },
      metrics,
    });
    const decisions: RateLimitDecision[] = [];
    for (let i = 0; i < 6; i++) decisions.push(await limiter.check("u_1"));
    expect(decisions.map((d) => [d.allowed, d.banned])).toEqual([
      [true, false],
      [false, false],
      [false, false],
      [false, false],
      [false, true],
      [false, true],
    ]);
    expect(store.calls).toBe(2);
    expect(metrics.count("decisions", { policy: "default", outcome: "ban_started" })).toBe(1);
    const err: unknown = await limiter.consume("u_1").catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "RATE_LIMIT_BANNED", status: 403 });
    expect((err as { headers: Record<string, string> }).headers["retry-after"]).toBe("1");
    await new Promise((resolve) => setTimeout(resolve, 170));
    // The ban is over; the quota (1 per minute) is still used: an ordinary 429 again.
    expect(await limiter.check("u_1")).toMatchObject({ allowed: false, banned: false });
  });

  it("refuses ban options it cannot honour", () => {
    const store = new MemoryRateLimitStore();
    expect(
      () => new RateLimiter(store, { limit: 1, windowMs: 1_000, ban: { after: 0, withinMs: 1_000, forMs: 1_000 } }),
    ).toThrow(/Invalid ban \(after 0 refusals/);
    expect(
      () => new RateLimiter(store, { limit: 1, windowMs: 1_000, ban: { after: 3, withinMs: 1_000, forMs: 2 ** 31 } }),
    ).toThrow(/Invalid ban.forMs/);
  });
});
