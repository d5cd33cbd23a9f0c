// RedisRateLimitStore beyond the contract: one round trip, one script call per turn of the event loop, expiring
// prefixed keys, the NOSCRIPT fallback, and Redis down.
import { freePort } from "../support/free-port";
import { Cluster, Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { rateOf } from "@/blocks/rate-limiter/gcra";
import { RateLimiter } from "@/blocks/rate-limiter/limiter";
import {
  MAX_KEYS_PER_CALL,
  RedisRateLimitStore,
  type RedisScriptClient,
} from "@/blocks/rate-limiter/stores/redis-store";
import { recordingMetrics } from "@/blocks/rate-limiter/testing/recorders";
import type { StoreDecision } from "@/blocks/rate-limiter/types";
import { startRedisCluster } from "../idempotency/support/redis-cluster";
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

  it("decisions started in one turn share one EVALSHA, in order: a key named twice is counted twice", async () => {
    const redis = await openRedis();
    const prefix = `${uniqueName("rl")}:`;
    const tight = rateOf({ name: "p", limit: 2, windowMs: 60_000 });
    try {
      const store = new RedisRateLimitStore(redis, { prefix });
      await store.take("warm-up", tight); // may load the script
      const sent: number[] = [];
      const send = redis.sendCommand.bind(redis);
      redis.sendCommand = (...args: Parameters<Redis["sendCommand"]>) => {
        if (args[0].name === "evalsha") sent.push(Number(args[0].args[1]));
        return send(...args);
      };
      const decisions = await Promise.all(["a", "b", "a", "a"].map((key) => store.take(key, tight)));
      expect(sent).toEqual([4]); // one call, four keys
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
      const [a1, , a2, a3] = decisions as [StoreDecision, StoreDecision, StoreDecision, StoreDecision];
      expect(a2.tat - a1.tat).toBe(tight.intervalUs);
      expect(a3.tat).toBe(a2.tat); // refused: the TAT stays
      expect(new Set(decisions.map((d) => d.now)).size).toBe(1); // one clock reading for the call
    } finally {
      await redis.del(`${prefix}warm-up`, `${prefix}a`, `${prefix}b`);
      redis.disconnect();
    }
  });
});

describe.skipIf(!redisUrl)("[REDIS_URL] on a Redis Cluster", () => {
  it("decides keys of every slot, started in one turn, each in a call of its own", async () => {
    const cluster = await startRedisCluster();
    const redis = new Cluster(
      cluster.ports.map((port) => ({ host: "127.0.0.1", port })),
      { redisOptions: { maxRetriesPerRequest: 1 } },
    );
    try {
      await new Promise((resolve) => redis.once("ready", resolve));
      const store = new RedisRateLimitStore(redis);
      const tight = rateOf({ name: "p", limit: 1, windowMs: 60_000 });
      const keys = Array.from({ length: 20 }, (_, i) => `k${i}`);
      const decisions = await Promise.all([...keys, "k0"].map((key) => store.take(key, tight)));
      expect(decisions.map((d) => d.allowed)).toEqual([...keys.map(() => true), false]);
    } finally {
      redis.disconnect();
      await cluster.stop();
    }
  }, 30_000);
});

/** A client that answers every key allowed, and records the keys of each call. */
function recordingClient(calls: string[][], extra: Partial<RedisScriptClient> = {}): RedisScriptClient {
  const answer = async (_script: string, count: number, ...args: Array<string | number>) => {
    calls.push(args.slice(0, count).map(String));
    return [...Array.from({ length: count }, (_, i) => [1, 2_000 + i]).flat(), 1_000];
  };
  return { evalsha: answer, eval: answer, ...extra };
}

describe("one script call per turn of the event loop", () => {
  it(`sends at most ${MAX_KEYS_PER_CALL} keys a call`, async () => {
    const calls: string[][] = [];
    const store = new RedisRateLimitStore(recordingClient(calls), { prefix: "" });
    const keys = Array.from({ length: MAX_KEYS_PER_CALL + 1 }, (_, i) => `k${i}`);
    const decisions = await Promise.all(keys.map((key) => store.take(key, rate)));
    expect(calls.map((call) => call.length)).toEqual([MAX_KEYS_PER_CALL, 1]);
    expect(calls.flat()).toEqual(keys);
    expect(decisions[1]).toEqual({ allowed: true, tat: 2_001, now: 1_000 });
  });

  it("sends each decision at once, alone, with batch: false and on a Redis Cluster (keys in other slots)", async () => {
    for (const [client, options] of [
      [(calls: string[][]) => recordingClient(calls), { batch: false }],
      [(calls: string[][]) => recordingClient(calls, { isCluster: true }), {}],
    ] as const) {
      const calls: string[][] = [];
      const store = new RedisRateLimitStore(client(calls), { prefix: "", ...options });
      const pending = [store.take("a", rate), store.take("b", rate)];
      expect(calls).toEqual([["a"], ["b"]]); // sent before the turn ends
      expect(await Promise.all(pending)).toEqual([
        { allowed: true, tat: 2_000, now: 1_000 },
        { allowed: true, tat: 2_000, now: 1_000 },
      ]);
    }
  });

  it("a failed call fails each of its decisions with the client's error; so does a reply of the wrong shape", async () => {
    const down = new Error("ECONNRESET");
    const failing = new RedisRateLimitStore({
      evalsha: () => Promise.reject(down),
      eval: () => Promise.reject(down),
    });
    const failed = await Promise.allSettled([failing.take("a", rate), failing.take("b", rate)]);
    expect(failed).toEqual([
      { status: "rejected", reason: down },
      { status: "rejected", reason: down },
    ]);
    const throwing = new RedisRateLimitStore({
      evalsha: () => {
        throw down;
      },
      eval: () => Promise.reject(down),
    });
    await expect(throwing.take("a", rate)).rejects.toBe(down);
    const odd = new RedisRateLimitStore({ evalsha: async () => [1, 2_000], eval: async () => [1, 2_000] });
    await expect(odd.take("a", rate)).rejects.toThrow("Unexpected reply from the rate-limit script: [1,2000]");
  });

  it("loads the script with EVAL for a whole call after NOSCRIPT", async () => {
    const calls: string[][] = [];
    const answer = recordingClient(calls).eval;
    const store = new RedisRateLimitStore(
      {
        evalsha: async () => {
          throw new Error("NOSCRIPT No matching script. Please use EVAL.");
        },
        eval: answer,
      },
      { prefix: "" },
    );
    const decisions = await Promise.all([store.take("a", rate), store.take("b", rate)]);
    expect(calls).toEqual([["a", "b"]]);
    expect(decisions.map((d) => d.tat)).toEqual([2_000, 2_001]);
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
