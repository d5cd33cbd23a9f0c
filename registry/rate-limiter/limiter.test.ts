import { describe, expect, it } from "vitest";
import { isRateLimitError } from "./errors";
import { RateLimiter } from "./limiter";
import { MemoryRateLimitStore } from "./stores/memory-store";
import { recordingLogger, recordingMetrics } from "./testing/recorders";
import type { RateLimitStore } from "./types";

const failing: RateLimitStore = { take: () => Promise.reject(new Error("connect ECONNREFUSED 10.0.0.1:6379")) };
const silent: RateLimitStore = { take: () => new Promise(() => {}) };

describe("RateLimiter", () => {
  it("keeps each policy's keys apart on one store", async () => {
    const store = new MemoryRateLimitStore();
    const strict = new RateLimiter(store, { name: "strict", limit: 1, windowMs: 60_000 });
    const loose = new RateLimiter(store, { name: "loose", limit: 5, windowMs: 60_000 });
    expect((await strict.check("u_1")).allowed).toBe(true);
    expect((await strict.check("u_1")).allowed).toBe(false);
    expect((await loose.check("u_1")).allowed).toBe(true);
  });

  it("logs and counts every decision", async () => {
    const logger = recordingLogger();
    const metrics = recordingMetrics();
    const limiter = new RateLimiter(new MemoryRateLimitStore(), {
      name: "payments",
      limit: 1,
      windowMs: 60_000,
      logger,
      metrics,
    });
    await limiter.check("u_1");
    await limiter.check("u_1");
    expect(metrics.count("decisions", { policy: "payments", outcome: "allowed" })).toBe(1);
    expect(metrics.count("decisions", { policy: "payments", outcome: "limited" })).toBe(1);
    expect(logger.lines.map((line) => [line.level, line.msg, line.key])).toEqual([
      ["debug", "rate-limit: allowed", "u_1"],
      ["info", "rate-limit: limited", "u_1"],
    ]);
  });

  it("consume() rejects with RATE_LIMITED, carrying the status and headers", async () => {
    const limiter = new RateLimiter(new MemoryRateLimitStore(), { limit: 1, windowMs: 60_000 });
    await limiter.consume("u_1");
    const err: unknown = await limiter.consume("u_1").catch((e: unknown) => e);
    expect(isRateLimitError(err) && err.code).toBe("RATE_LIMITED");
    expect(err).toMatchObject({ status: 429, retryAfterSeconds: 60, headers: { "retry-after": "60" } });
  });

  it("insurance by default: while the store fails, a local limiter with the same policy decides", async () => {
    const logger = recordingLogger();
    const metrics = recordingMetrics();
    const limiter = new RateLimiter(failing, { limit: 2, windowMs: 60_000, logger, metrics });
    const decisions = [await limiter.check("u_1"), await limiter.check("u_1"), await limiter.check("u_1")];
    expect(decisions.map((d) => [d.allowed, d.counted])).toEqual([
      [true, true],
      [true, true],
      [false, true],
    ]);
    expect(decisions[2]?.retryAfterMs).toBeGreaterThan(29_000);
    expect(decisions[2]?.retryAfterMs).toBeLessThanOrEqual(30_000);
    expect(metrics.count("storeErrors", { policy: "default", reason: "error" })).toBe(3);
    expect(metrics.count("decisions", { policy: "default", outcome: "insurance_allowed" })).toBe(2);
    expect(metrics.count("decisions", { policy: "default", outcome: "insurance_limited" })).toBe(1);
    expect(logger.lines[0]).toMatchObject({
      level: "warn",
      err: { name: "Error", message: "connect ECONNREFUSED 10.0.0.1:6379" },
    });
  });

  it("insurance starts from what the store already let through in this process", async () => {
    let down = false;
    const memory = new MemoryRateLimitStore();
    const flaky: RateLimitStore = {
      take: (key, rate) => (down ? Promise.reject(new Error("ECONNRESET")) : memory.take(key, rate)),
    };
    const limiter = new RateLimiter(flaky, { limit: 3, windowMs: 60_000 });
    await limiter.check("u_1");
    await limiter.check("u_1");
    down = true;
    expect([(await limiter.check("u_1")).allowed, (await limiter.check("u_1")).allowed]).toEqual([true, false]);
  });

  it('onStoreError "allow": the request passes uncounted, with a warning and a metric', async () => {
    const logger = recordingLogger();
    const metrics = recordingMetrics();
    const limiter = new RateLimiter(failing, { limit: 1, windowMs: 60_000, onStoreError: "allow", logger, metrics });
    expect(await limiter.check("u_1")).toMatchObject({ allowed: true, counted: false });
    expect(await limiter.check("u_1")).toMatchObject({ allowed: true, counted: false });
    expect(metrics.count("decisions", { policy: "default", outcome: "failed_open" })).toBe(2);
    expect(logger.lines[0]).toMatchObject({
      level: "warn",
      msg: "rate-limit: store failed, request let through uncounted",
    });
  });

  it('onStoreError "deny": RATE_LIMITER_UNAVAILABLE (503)', async () => {
    const limiter = new RateLimiter(failing, { limit: 1, windowMs: 60_000, onStoreError: "deny" });
    const err: unknown = await limiter.check("u_1").catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "RATE_LIMITER_UNAVAILABLE", status: 503 });
  });

  it("gives up on a store that does not answer within timeoutMs, and the insurance decides", async () => {
    const metrics = recordingMetrics();
    const limiter = new RateLimiter(silent, { limit: 1, windowMs: 60_000, timeoutMs: 20, metrics });
    const started = Date.now();
    expect(await limiter.check("u_1")).toMatchObject({ allowed: true, counted: true });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(metrics.count("storeErrors", { policy: "default", reason: "timeout" })).toBe(1);
  });

  it("keeps at most maxInFlight (default: limit) store calls per key waiting; the rest are refused without a call", async () => {
    let calls = 0;
    const slow: RateLimitStore = {
      take: () => {
        calls++;
        return new Promise(() => {});
      },
    };
    const metrics = recordingMetrics();
    const limiter = new RateLimiter(slow, { limit: 3, windowMs: 60_000, timeoutMs: 20, metrics });
    const decisions = await Promise.all(Array.from({ length: 50 }, () => limiter.check("u_1")));
    expect(calls).toBe(3);
    expect(decisions.filter((d) => d.allowed)).toHaveLength(3);
    expect(metrics.count("decisions", { policy: "default", outcome: "in_flight_limited" })).toBe(47);
    // Another key has its own slots.
    expect((await limiter.check("u_2")).allowed).toBe(true);
    expect(calls).toBe(4);
  });

  it("keeps the slots of calls still waiting when it drops the idle ones of many callers", async () => {
    let hotCalls = 0;
    const memory = new MemoryRateLimitStore();
    const store: RateLimitStore = {
      take: (key, rate) => {
        if (!key.endsWith(":hot")) return memory.take(key, rate);
        hotCalls++;
        return new Promise(() => {});
      },
    };
    const limiter = new RateLimiter(store, { limit: 1, windowMs: 60_000, timeoutMs: 20 });
    await limiter.check("hot"); // its store call never answers: its slot stays taken
    for (let i = 0; i < 10_050; i++) await limiter.check(`u_${i}`);
    expect(await limiter.check("hot")).toMatchObject({ allowed: false });
    expect(hotCalls).toBe(1);
  });

  it("timeoutMs above 2^31-1 makes every store call time out: refused at construction with a clear error", () => {
    const store = new MemoryRateLimitStore();
    expect(() => new RateLimiter(store, { limit: 1, windowMs: 1_000, timeoutMs: 2 ** 31 })).toThrow(
      /Invalid timeoutMs 2147483648: an integer from 1 to 2147483647/,
    );
    expect(() => new RateLimiter(store, { limit: 1, windowMs: 1_000, timeoutMs: 0 })).toThrow(/Invalid timeoutMs/);
    expect(() => new RateLimiter(store, { limit: 1, windowMs: 1_000, timeoutMs: Number.NaN })).toThrow(
      /Invalid timeoutMs/,
    );
    expect(() => new RateLimiter(store, { limit: 1, windowMs: 1_000, onStoreError: "open" as never })).toThrow(
      /Invalid onStoreError "open"/,
    );
    expect(() => new RateLimiter(store, { limit: 1, windowMs: 1_000, maxInFlight: 0 })).toThrow(/Invalid maxInFlight/);
  });

  it("refuses policies the headers cannot carry", () => {
    expect(() => new RateLimiter(new MemoryRateLimitStore(), { name: 'a"b', limit: 1, windowMs: 1 })).toThrow(
      /policy name/,
    );
    expect(() => new RateLimiter(new MemoryRateLimitStore(), { limit: 0, windowMs: 1 })).toThrow(/rate limit/);
  });
});
