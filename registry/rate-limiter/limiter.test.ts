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
    const limiter = new RateLimiter(new MemoryRateLimitStore(), { name: "payments", limit: 1, windowMs: 60_000, logger, metrics });
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
    expect(err).toMatchObject({ status: 429, retryAfterSeconds: 60, headers: { "Retry-After": "60" } });
  });

  it("fails open by default: the request passes uncounted, with a warning and a metric", async () => {
    const logger = recordingLogger();
    const metrics = recordingMetrics();
    const limiter = new RateLimiter(failing, { limit: 1, windowMs: 60_000, logger, metrics });
    expect(await limiter.check("u_1")).toMatchObject({ allowed: true, counted: false });
    expect(metrics.count("storeErrors", { policy: "default", reason: "error" })).toBe(1);
    expect(metrics.count("decisions", { policy: "default", outcome: "failed_open" })).toBe(1);
    expect(logger.lines[0]).toMatchObject({ level: "warn", err: { name: "Error", message: "connect ECONNREFUSED 10.0.0.1:6379" } });
  });

  it("fails closed when asked: RATE_LIMITER_UNAVAILABLE (503)", async () => {
    const limiter = new RateLimiter(failing, { limit: 1, windowMs: 60_000, failClosed: true });
    const err: unknown = await limiter.check("u_1").catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "RATE_LIMITER_UNAVAILABLE", status: 503 });
  });

  it("gives up on a store that does not answer within timeoutMs", async () => {
    const metrics = recordingMetrics();
    const limiter = new RateLimiter(silent, { limit: 1, windowMs: 60_000, timeoutMs: 20, metrics });
    const started = Date.now();
    expect((await limiter.check("u_1")).counted).toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(metrics.count("storeErrors", { policy: "default", reason: "timeout" })).toBe(1);
  });

  it("refuses policies the headers cannot carry", () => {
    expect(() => new RateLimiter(new MemoryRateLimitStore(), { name: 'a"b', limit: 1, windowMs: 1 })).toThrow(/policy name/);
    expect(() => new RateLimiter(new MemoryRateLimitStore(), { limit: 0, windowMs: 1 })).toThrow(/rate limit/);
  });
});
