// RedisRateLimitStore beyond the contract: one round trip, expiring prefixed keys, the NOSCRIPT fallback, and Redis down.
import { freePort } from "../support/free-port";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { rateOf } from "@/blocks/rate-limiter/gcra";
import { RateLimiter } from "@/blocks/rate-limiter/limiter";
import { RedisRateLimitStore, type RedisScriptClient } from "@/blocks/rate-limiter/stores/redis-store";
import { recordingMetrics } from "@/blocks/rate-limiter/testing/recorders";
import { openRedis, redisUrl, uniqueName } from "./support/stores";

const rate = rateOf({ name: "p", limit: 10, windowMs: 60_000 });

describe.skipIf(!redisUrl)("[REDIS_URL] RedisRateLimitStore", () => {
  it("decides in one command (EVALSHA), under the prefix, and the key expires when its debt is paid", async () => {
    const redis = await openRedis();
    const prefix = `${uniqueName("rl")}:`;
    const sent: string[] = [];
    const send = redis.sendCommand.bind(redis);
    redis.sendCommand = (...args: Parameters<Redis["sendCommand"]>) => {
      sent.push(args[0].name);
      return send(...args);
    };
    try {
      const store = new RedisRateLimitStore(redis, { prefix });
      await store.take("k", rate); // may load the script (NOSCRIPT, then EVAL) if no one has yet
      sent.length = 0;
      for (let i = 0; i < 5; i++) await store.take("k", rate);
      expect(sent).toEqual(["evalsha", "evalsha", "evalsha", "evalsha", "evalsha"]);
      const ttl = await redis.pttl(`${prefix}k`);
      expect(ttl).toBeGreaterThan((6 * rate.intervalUs) / 1000 - 1_000);
      expect(ttl).toBeLessThanOrEqual((6 * rate.intervalUs) / 1000);
    } finally {
      await redis.del(`${prefix}k`);
      redis.disconnect();
    }
  });
});

it("loads the script with EVAL when Redis answers NOSCRIPT (after a restart or SCRIPT FLUSH)", async () => {
  const calls: string[] = [];
  const client: RedisScriptClient = {
    evalsha: async () => {
      calls.push("evalsha");
      throw new Error("NOSCRIPT No matching script. Please use EVAL.");
    },
    eval: async () => {
      calls.push("eval");
      return [1, 2_000, 1_000];
    },
  };
  expect(await new RedisRateLimitStore(client).take("k", rate)).toEqual({ allowed: true, tat: 2_000, now: 1_000 });
  expect(calls).toEqual(["evalsha", "eval"]);
});

describe("Redis down (nothing listens on the port)", () => {
  it("the insurance limiter decides within the limiter's timeout, even with ioredis queueing commands while it reconnects", async () => {
    const redis = new Redis({ port: await freePort(), host: "127.0.0.1", lazyConnect: true });
    redis.on("error", () => {});
    const metrics = recordingMetrics();
    const limiter = new RateLimiter(new RedisRateLimitStore(redis), {
      limit: 1,
      windowMs: 60_000,
      timeoutMs: 100,
      maxInFlight: 3,
      metrics,
    });
    try {
      const started = performance.now();
      const decisions = await Promise.all([limiter.check("u_1"), limiter.check("u_1"), limiter.check("u_1")]);
      expect(performance.now() - started).toBeLessThan(100 + 400);
      expect(decisions.map((d) => d.allowed)).toEqual([true, false, false]);
      expect(metrics.count("decisions", { policy: "default", outcome: "insurance_allowed" })).toBe(1);
      expect(metrics.count("storeErrors", { policy: "default", reason: "timeout" })).toBe(3);
    } finally {
      redis.disconnect();
    }
  });

  it("fails at once with enableOfflineQueue: false, and fails closed when configured", async () => {
    const redis = new Redis({
      port: await freePort(),
      host: "127.0.0.1",
      enableOfflineQueue: false,
      lazyConnect: true,
    });
    redis.on("error", () => {});
    const limiter = new RateLimiter(new RedisRateLimitStore(redis), {
      limit: 1,
      windowMs: 60_000,
      timeoutMs: 5_000,
      onStoreError: "deny",
    });
    try {
      const started = performance.now();
      await expect(limiter.check("u_1")).rejects.toMatchObject({ code: "RATE_LIMITER_UNAVAILABLE", status: 503 });
      expect(performance.now() - started).toBeLessThan(1_000);
    } finally {
      redis.disconnect();
    }
  });
});
