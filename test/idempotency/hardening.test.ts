// Issue 12 (an adversarial review), core side: one regression test per finding, named after what it proves.
import { afterEach, describe, expect, it, vi } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import { outcome } from "@/blocks/idempotency/testing/deferred";
import { recordingLogger, recordingMetrics } from "@/blocks/idempotency/testing/recorders";
import type { CachedRecord, CacheScope, IdempotencyCache, IdempotencyStore } from "@/blocks/idempotency/types";
import { allStoreKinds } from "./support/store-harness";
import { SERVICE_START_TIMEOUT_MS } from "./support/services";

const payment = (userId = "u_1", key = "k-1") => ({
  operation: "payments:create",
  userId,
  key,
  payload: { amount: 100 },
});

/** A cache in a Map that a test can fill with anything, as a shared Redis can be. */
function mapCache() {
  const entries = new Map<string, unknown>();
  const id = (s: CacheScope) => JSON.stringify([s.namespace, s.operation, s.userId, s.key]);
  const cache: IdempotencyCache = {
    get: async (s) => entries.get(id(s)),
    set: async (s, record) => void entries.set(id(s), record),
  };
  return { cache, entries, poison: (value: unknown) => void entries.forEach((_, key) => entries.set(key, value)) };
}

describe("point 5: scope strings must be well-formed Unicode", () => {
  describe.each(allStoreKinds)("$name", (kind) => {
    it(
      "refuses a lone surrogate in userId or operation before the store is called",
      { timeout: SERVICE_START_TIMEOUT_MS },
      async () => {
        const opened = await kind.open();
        const harness = await opened.fresh();
        try {
          const create = vi.spyOn(harness.store, "create");
          const handler = new IdempotencyHandler(harness.store, undefined, { logger: recordingLogger() });
          for (const context of [
            payment("acct_\uD800"),
            payment("acct_\uDC00"),
            { ...payment(), operation: "pay\uDBFF" },
          ]) {
            await expect(handler.execute(context, () => "charged")).rejects.toThrow(/well-formed Unicode/);
          }
          expect(create).not.toHaveBeenCalled();
          // A well-formed astral id (a surrogate pair) is fine.
          expect(await handler.execute(payment("acct_\u{1F600}"), () => "charged")).toEqual({
            response: "charged",
            replayed: false,
          });
        } finally {
          await harness.close();
          await opened.close();
        }
      },
    );
  });
});

describe("point 9: the cache is checked and namespaced", () => {
  it("reads the store, counting a cache error, when the cache holds a valid-JSON value of the wrong shape", async () => {
    const { cache, poison } = mapCache();
    const metrics = recordingMetrics();
    const handler = new IdempotencyHandler(new MemoryStore(), cache, { logger: recordingLogger(), metrics });
    await handler.execute(payment(), () => ({ id: "pay_1" }));
    for (const bad of [
      { status: "SUCCESS" },
      { requestHash: 1, status: "SUCCESS", response: null },
      { requestHash: "h", status: "SUCCESS", response: "{not json" },
      "text",
      42,
    ]) {
      poison(bad);
      expect(await handler.execute(payment(), () => ({ id: "pay_2" }))).toEqual({
        response: { id: "pay_1" },
        replayed: true,
      });
    }
    expect(metrics.total("cacheErrors", { method: "get" })).toBe(5);
  });

  it("keeps two handlers on different tables apart when they share one cache", async () => {
    const { cache } = mapCache();
    const onTable = (table: string): IdempotencyStore => Object.assign(new MemoryStore(), { table });
    const orders = new IdempotencyHandler(onTable("orders_idempotency"), cache, { logger: recordingLogger() });
    const refunds = new IdempotencyHandler(onTable("refunds_idempotency"), cache, { logger: recordingLogger() });
    await orders.execute(payment(), () => "order placed");
    expect(await refunds.execute(payment(), () => "refund sent")).toEqual({ response: "refund sent", replayed: false });
  });
});

describe("point 13: a failed key keeps what it answered", () => {
  it("gives REQUEST_FAILED the kept response, on a store read and on a cache read", async () => {
    const { cache, entries } = mapCache();
    const handler = new IdempotencyHandler(new MemoryStore(), cache, { logger: recordingLogger() });
    const declined = { status: 402, body: "card declined" };
    await outcome(
      handler.execute(payment(), () => Promise.reject(new Error("declined")), {
        isPermanentError: () => true,
        failureResponse: () => declined,
      }),
    );
    expect(await outcome(handler.execute(payment(), () => "never"))).toMatchObject({
      ok: false,
      error: { code: "REQUEST_FAILED", response: declined },
    });
    expect([...entries.values()]).toEqual([expect.objectContaining({ status: "FAILED" }) as CachedRecord]);
    expect(await outcome(handler.execute(payment(), () => "never"))).toMatchObject({
      ok: false,
      error: { code: "REQUEST_FAILED", response: declined },
    });
  });

  it("keeps the last failed answer when transient failures poison the key", async () => {
    const handler = new IdempotencyHandler(new MemoryStore(), undefined, { logger: recordingLogger(), maxRetries: 2 });
    for (let attempt = 1; attempt <= 2; attempt++) {
      await outcome(
        handler.execute(payment(), () => Promise.reject(new Error("bank down")), {
          failureResponse: () => ({ status: 503, attempt }),
        }),
      );
    }
    expect(await outcome(handler.execute(payment(), () => "never"))).toMatchObject({
      ok: false,
      error: { code: "REQUEST_FAILED", response: { status: 503, attempt: 2 } },
    });
  });
});

describe("point 16: a handler without a logger says so once", () => {
  afterEach(() => vi.restoreAllMocks());

  it("emits one process warning naming the `logger` option", async () => {
    vi.resetModules();
    const emitWarning = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
    const { IdempotencyHandler: FreshHandler } = await import("@/blocks/idempotency/handler");
    new FreshHandler(new MemoryStore());
    new FreshHandler(new MemoryStore());
    new FreshHandler(new MemoryStore(), undefined, { logger: recordingLogger() });
    expect(emitWarning).toHaveBeenCalledTimes(1);
    expect(emitWarning).toHaveBeenCalledWith(expect.stringContaining("`logger`"), expect.anything());
  });
});

describe("point 18: recovery never frees a live execution", () => {
  afterEach(() => vi.restoreAllMocks());

  it("refuses a recovery timeout shorter than the heartbeat interval, and warns under two intervals", async () => {
    const emitWarning = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
    const handler = new IdempotencyHandler(new MemoryStore(), undefined, {
      logger: recordingLogger(),
      heartbeatIntervalMs: 60_000,
    });
    await expect(handler.recoverStuckRecords({ timeoutInMs: 30_000 })).rejects.toThrow(
      /shorter than the heartbeat interval/,
    );
    await expect(handler.recoverStuckRecords({ timeoutInMs: 5 * 60_000 })).resolves.toEqual({
      released: 0,
      poisoned: 0,
    });
    expect(emitWarning).not.toHaveBeenCalled();
    await expect(handler.recoverStuckRecords({ timeoutInMs: 90_000 })).resolves.toEqual({ released: 0, poisoned: 0 });
    expect(emitWarning).toHaveBeenCalledWith(expect.stringContaining("two heartbeat intervals"), expect.anything());
  });

  it("accepts any timeout when the heartbeat is off", async () => {
    const handler = new IdempotencyHandler(new MemoryStore(), undefined, {
      logger: recordingLogger(),
      heartbeatIntervalMs: 0,
    });
    await expect(handler.recoverStuckRecords({ timeoutInMs: 0 })).resolves.toEqual({ released: 0, poisoned: 0 });
  });
});
