// The handler under outages and misuse: store and cache failures, lost writes, lost leases, bad input.
import pg from "pg";
import { Redis } from "ioredis";
import { describe, expect, it, vi } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { RedisCache } from "@/blocks/idempotency/caches/redis-cache";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import { PostgresStore } from "@/blocks/idempotency/stores/postgres-store";
import { deferred, outcome } from "@/blocks/idempotency/testing/deferred";
import { recordingLogger, recordingMetrics } from "@/blocks/idempotency/testing/recorders";
import { openTestRedis, redisUrl } from "./support/services";
import type { IdempotencyCache, IdempotencyStore } from "@/blocks/idempotency/types";

const context = (key = "key-1", payload: unknown = { amount: 100 }) => ({
  operation: "payments:create",
  userId: "u_1",
  key,
  payload,
});
const never = <T>() => new Promise<T>(() => {});

/** A real MemoryStore with some of its methods replaced by failures. */
function storeWith(overrides: Partial<IdempotencyStore>): IdempotencyStore {
  const store = new MemoryStore();
  return Object.assign(Object.create(store) as IdempotencyStore, overrides);
}

const failingCache: IdempotencyCache = {
  get: async () => Promise.reject(new Error("ECONNREFUSED")),
  set: async () => Promise.reject(new Error("ECONNREFUSED")),
};

describe("when the store is down", () => {
  it("rejects with STORE_UNAVAILABLE and never runs the operation (connection refused)", async () => {
    const pool = new pg.Pool({ host: "127.0.0.1", port: 1, user: "postgres", connectionTimeoutMillis: 500 });
    pool.on("error", () => {});
    const handler = new IdempotencyHandler(new PostgresStore(pool));
    let runs = 0;
    const result = await outcome(handler.execute(context(), async () => ++runs));
    expect(result).toMatchObject({ ok: false, code: "STORE_UNAVAILABLE" });
    expect(runs).toBe(0);
    await pool.end();
  });

  it("rejects with STORE_UNAVAILABLE within storeTimeoutMs when the store hangs", async () => {
    const metrics = recordingMetrics();
    const handler = new IdempotencyHandler(storeWith({ create: never }), undefined, { storeTimeoutMs: 30, metrics });
    let runs = 0;
    const result = await outcome(handler.execute(context(), async () => ++runs));
    expect(result).toMatchObject({ ok: false, code: "STORE_UNAVAILABLE" });
    expect(runs).toBe(0);
    expect(metrics.total("storeErrors", { method: "create" })).toBe(1);
  });

  it("keeps trying to free a create whose answer was lost until the store answers again", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const inner = new MemoryStore();
      let refusals = 2;
      const store = Object.assign(Object.create(inner) as IdempotencyStore, {
        create: async (input: Parameters<IdempotencyStore["create"]>[0]) => {
          await inner.create(input);
          throw new Error("Connection terminated unexpectedly");
        },
        release: async (...args: Parameters<IdempotencyStore["release"]>) => {
          if (refusals-- > 0) throw new Error("ECONNREFUSED");
          return inner.release(...args);
        },
      });
      const handler = new IdempotencyHandler(store, undefined, { heartbeatIntervalMs: 0 });
      expect(await outcome(handler.execute(context(), async () => "charged"))).toMatchObject({
        code: "STORE_UNAVAILABLE",
      });
      expect(await inner.get(context())).toMatchObject({ status: "PROCESSING" });
      await vi.advanceTimersByTimeAsync(5_000);
      expect(refusals).toBe(-1);
      expect(await inner.get(context())).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it("reports maintenance failures as STORE_UNAVAILABLE too", async () => {
    const handler = new IdempotencyHandler(storeWith({ recoverStuckRecords: () => Promise.reject(new Error("down")) }));
    expect(await outcome(handler.recoverStuckRecords())).toMatchObject({ code: "STORE_UNAVAILABLE" });
  });
});

describe("when the cache is down", () => {
  it.each([
    ["rejects every call", failingCache],
    ["never answers", { get: never, set: never } as IdempotencyCache],
  ])("still answers from the store when the cache %s, and counts the errors", async (_, cache) => {
    const metrics = recordingMetrics();
    const handler = new IdempotencyHandler(new MemoryStore(), cache, { cacheTimeoutMs: 20, metrics });
    let runs = 0;
    expect(await handler.execute(context(), async () => ++runs)).toEqual({ response: 1, replayed: false });
    expect(await handler.execute(context(), async () => ++runs)).toEqual({ response: 1, replayed: true });
    expect(runs).toBe(1);
    expect(metrics.total("cacheErrors")).toBeGreaterThanOrEqual(3);
  });

  it("still works with a real Redis client that cannot connect", async () => {
    const redis = new Redis({
      host: "127.0.0.1",
      port: 1,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    redis.on("error", () => {});
    const handler = new IdempotencyHandler(new MemoryStore(), new RedisCache(redis));
    expect(await handler.execute(context(), async () => "ok")).toEqual({ response: "ok", replayed: false });
    expect(await handler.execute(context(), async () => "again")).toEqual({ response: "ok", replayed: true });
    redis.disconnect();
  });
});

describe.skipIf(!redisUrl)("[REDIS_URL] with a real Redis cache", () => {
  it("answers replays from the cache without a store round trip, and still detects a changed payload", async () => {
    const redis = await openTestRedis();
    const store = new MemoryStore();
    let creates = 0;
    const counted = Object.assign(Object.create(store) as IdempotencyStore, {
      create: (input: Parameters<IdempotencyStore["create"]>[0]) => (creates++, store.create(input)),
    });
    const metrics = recordingMetrics();
    const handler = new IdempotencyHandler(
      counted,
      new RedisCache(redis, { prefix: `test:${process.pid}:${Date.now()}:` }),
      { metrics },
    );
    await handler.execute(context(), async () => ({ z: 1, a: 2 }));
    const replay = await handler.execute(context(), async () => "never");
    expect(JSON.stringify(replay.response)).toBe('{"z":1,"a":2}');
    expect(creates).toBe(1);
    expect(metrics.total("cacheHits")).toBe(1);
    expect(await outcome(handler.execute(context("key-1", { amount: 5 }), async () => "never"))).toMatchObject({
      code: "KEY_REUSED_WITH_DIFFERENT_REQUEST",
    });
    redis.disconnect();
  });
});

describe("when the result cannot be recorded", () => {
  it("retries the write a bounded number of times, then returns the result, logged and counted", async () => {
    const logger = recordingLogger();
    const metrics = recordingMetrics();
    let writes = 0;
    const store = storeWith({ markSuccess: async () => Promise.reject(new Error(`write ${++writes} failed`)) });
    const handler = new IdempotencyHandler(store, undefined, { completionAttempts: 3, logger, metrics });
    expect(await handler.execute(context(), async () => "charged")).toEqual({ response: "charged", replayed: false });
    expect(writes).toBe(3);
    expect(metrics.total("unrecorded")).toBe(1);
    expect(logger.lines).toContainEqual(
      expect.objectContaining({ level: "error", status: "UNRECORDED", key: "key-1" }),
    );
    expect(await outcome(handler.execute(context(), async () => "again"))).toMatchObject({
      code: "REQUEST_IN_PROGRESS",
    });
  });

  it("accepts a write that timed out but landed: the record is ours and SUCCESS", async () => {
    const inner = new MemoryStore();
    let calls = 0;
    const store = Object.assign(Object.create(inner) as IdempotencyStore, {
      markSuccess: async (...args: Parameters<IdempotencyStore["markSuccess"]>) => {
        const landed = await inner.markSuccess(...args);
        if (++calls === 1) throw new Error("connection reset after commit");
        return landed;
      },
    });
    const metrics = recordingMetrics();
    const handler = new IdempotencyHandler(store, undefined, { metrics });
    expect(await handler.execute(context(), async () => "charged")).toEqual({ response: "charged", replayed: false });
    expect(metrics.total("unrecorded") + metrics.total("leaseLost")).toBe(0);
    expect(await handler.execute(context(), async () => "never")).toEqual({ response: "charged", replayed: true });
  });

  it("poisons the key when the result is not JSON, so the operation never runs twice", async () => {
    const handler = new IdempotencyHandler(new MemoryStore());
    await expect(handler.execute(context(), async () => ({ amount: 10n }))).rejects.toThrow(/cannot be stored as JSON/);
    expect(await outcome(handler.execute(context(), async () => "again"))).toMatchObject({ code: "REQUEST_FAILED" });
  });
});

describe("when a running execution loses its lease", () => {
  it("aborts the operation's signal once a heartbeat finds another owner", async () => {
    let offset = 0;
    const store = new MemoryStore({ now: () => Date.now() + offset });
    const handler = new IdempotencyHandler(store, undefined, { heartbeatIntervalMs: 5 });
    const gate = deferred();
    let signal: AbortSignal | undefined;
    const run = handler.execute(context(), async (ctx) => ((signal = ctx.signal), await gate.promise, "late"));
    await expect.poll(() => signal).toBeDefined();
    offset += 10 * 60_000;
    await handler.recoverStuckRecords({ timeoutInMs: 60_000 });
    await handler.execute(context(), async () => "new owner");
    await expect.poll(() => signal?.aborted).toBe(true);
    expect(signal?.reason).toMatchObject({ name: "LeaseLostError" });
    gate.resolve();
    await run;
    expect(await handler.execute(context(), async () => "never")).toEqual({ response: "new owner", replayed: true });
  });
});

describe("bad input", () => {
  const handler = new IdempotencyHandler(new MemoryStore());

  it.each(["", " key", "a".repeat(256), "naïve", "tab\tkey"])(
    "rejects the key %j as IDEMPOTENCY_KEY_INVALID",
    async (key) => {
      expect(await outcome(handler.execute(context(key), async () => "never"))).toMatchObject({
        code: "IDEMPOTENCY_KEY_INVALID",
      });
    },
  );

  it("rejects a payload nested beyond the limit as IDEMPOTENCY_PAYLOAD_INVALID", async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(await outcome(handler.execute(context("deep", deep), async () => "never"))).toMatchObject({
      code: "IDEMPOTENCY_PAYLOAD_INVALID",
    });
  });

  it("refuses an empty operation or user id as a programming error", async () => {
    await expect(handler.execute({ ...context(), userId: "" }, async () => "never")).rejects.toThrow(TypeError);
    await expect(handler.execute({ ...context(), operation: "" }, async () => "never")).rejects.toThrow(TypeError);
  });

  it("refuses nonsensical options when it is created", () => {
    expect(() => new IdempotencyHandler(new MemoryStore(), undefined, { maxRetries: 0 })).toThrow(/maxRetries/);
    expect(() => new IdempotencyHandler(new MemoryStore(), undefined, { ttlMs: -1 })).toThrow(/ttlMs/);
  });

  it("treats an isPermanentError that throws as transient, so the key can be retried", async () => {
    const h = new IdempotencyHandler(new MemoryStore());
    const boom = () => {
      throw new Error("classifier bug");
    };
    await expect(
      h.execute(context(), async () => Promise.reject(new Error("x")), { isPermanentError: boom }),
    ).rejects.toThrow("x");
    expect(await h.execute(context(), async () => "retried")).toEqual({ response: "retried", replayed: false });
  });
});

describe("lastAttempt: the caller will not try again (a broker's last delivery)", () => {
  class Timeout extends Error {}
  const fail = () => Promise.reject(new Timeout("the provider timed out"));

  it("a transient failure poisons the key at once, counted as poisoned, not permanent", async () => {
    const metrics = recordingMetrics();
    const handler = new IdempotencyHandler(new MemoryStore(), undefined, { metrics, maxRetries: 5 });
    await expect(handler.execute(context(), fail, { lastAttempt: true })).rejects.toBeInstanceOf(Timeout);
    expect(await outcome(handler.execute(context(), async () => "ran"))).toMatchObject({
      ok: false,
      code: "REQUEST_FAILED",
    });
    expect(metrics.total("executions", { outcome: "poisoned" })).toBe(1);
    expect(metrics.total("executions", { outcome: "permanent_failure" })).toBe(0);
  });

  it("without it the same failure frees the key for the next attempt", async () => {
    const handler = new IdempotencyHandler(new MemoryStore(), undefined, { maxRetries: 5 });
    await expect(handler.execute(context(), fail)).rejects.toBeInstanceOf(Timeout);
    expect(await outcome(handler.execute(context(), async () => "ran"))).toMatchObject({ ok: true });
  });

  it("a permanent error on the last attempt stays permanent", async () => {
    const metrics = recordingMetrics();
    const handler = new IdempotencyHandler(new MemoryStore(), undefined, { metrics, maxRetries: 5 });
    await expect(
      handler.execute(context(), fail, { lastAttempt: true, isPermanentError: () => true }),
    ).rejects.toBeInstanceOf(Timeout);
    expect(metrics.total("executions", { outcome: "permanent_failure" })).toBe(1);
    expect(metrics.total("executions", { outcome: "poisoned" })).toBe(0);
  });
});
