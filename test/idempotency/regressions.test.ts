// Faults found by the reliability suite (test/reliability), one regression test each, named after the fault.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import { deferred, outcome } from "@/blocks/idempotency/testing/deferred";
import { recordingLogger } from "@/blocks/idempotency/testing/recorders";
import { allStoreKinds, type StoreKind } from "./support/store-harness";
import type { IdempotencyStore } from "@/blocks/idempotency/types";

const MINUTE = 60_000;
const payment = { operation: "payments:create", userId: "u_1", key: "k-1", payload: { amount: 100 } };
class GatewayTimeout extends Error {}

describe("regressions found by the reliability suite", () => {
  it("a stale execution's late transient failure does not count against the new owner's retry budget", async () => {
    let offset = 0;
    const store = new MemoryStore({ now: () => Date.now() + offset });
    const logger = recordingLogger();
    const handler = new IdempotencyHandler(store, undefined, { heartbeatIntervalMs: 0, maxRetries: 3, logger });
    const staleGate = deferred();
    const stale = outcome(
      handler.execute(payment, async () => (await staleGate.promise, Promise.reject(new GatewayTimeout("stale")))),
    );
    await expect.poll(() => store.get(payment)).toBeDefined();

    offset += 10 * MINUTE;
    expect(await handler.recoverStuckRecords({ timeoutInMs: 5 * MINUTE })).toEqual({ released: 1, poisoned: 0 });
    const ownerGate = deferred();
    const owner = outcome(
      handler.execute(payment, async () => (await ownerGate.promise, Promise.reject(new GatewayTimeout("owner")))),
    );
    await expect.poll(async () => (await store.get(payment))?.status).toBe("PROCESSING");

    staleGate.resolve();
    expect(await stale).toMatchObject({ ok: false, error: { message: "stale" } });
    expect(logger.lines).toContainEqual(expect.objectContaining({ level: "error", status: "LEASE_LOST", key: "k-1" }));
    ownerGate.resolve();
    expect(await owner).toMatchObject({ ok: false, error: { message: "owner" } });

    // One recovered stall and one real failure: two of three attempts spent, so the retry still runs.
    expect(await handler.execute(payment, async () => "charged")).toEqual({ response: "charged", replayed: false });
  });
});

describe("regressions found by the reliability suite, with a slow store", () => {
  it("a create that answers after the store timeout hands its key back, so the retry runs at once", async () => {
    const inner = new MemoryStore();
    const landed = deferred();
    let slow = true;
    const store = Object.assign(Object.create(inner) as IdempotencyStore, {
      create: async (input: Parameters<IdempotencyStore["create"]>[0]) => {
        if (!slow) return inner.create(input);
        slow = false;
        await new Promise((resolve) => setTimeout(resolve, 60));
        const created = await inner.create(input);
        landed.resolve();
        return created;
      },
    });
    const logger = recordingLogger();
    const handler = new IdempotencyHandler(store, undefined, { storeTimeoutMs: 20, logger });
    let runs = 0;
    expect(await outcome(handler.execute(payment, async () => ++runs))).toMatchObject({ code: "STORE_UNAVAILABLE" });

    // The insert landed late; nothing runs under it, so it must not hold the key until recovery.
    await landed.promise;
    await expect.poll(() => inner.get(payment)).toBeUndefined();
    expect(await handler.execute(payment, async () => ++runs)).toEqual({ response: 1, replayed: false });
    expect(logger.lines).toContainEqual(expect.objectContaining({ level: "warn", status: "RELEASED", key: "k-1" }));
  });
});

describe.each(allStoreKinds)("regressions found by the reliability suite, on $name", (kind: StoreKind) => {
  let opened: Awaited<ReturnType<StoreKind["open"]>>;
  beforeAll(async () => {
    opened = await kind.open();
  });
  afterAll(async () => opened.close());

  it("a create whose insert committed but whose answer was lost frees its key, so the retry runs at once", async () => {
    const harness = await opened.fresh();
    let lose = true;
    const store = Object.assign(Object.create(harness.store) as IdempotencyStore, {
      create: async (input: Parameters<IdempotencyStore["create"]>[0]) => {
        const created = await harness.store.create(input);
        if (!lose) return created;
        lose = false;
        throw new Error("Connection terminated unexpectedly"); // the commit happened; its answer died with the socket
      },
    });
    const logger = recordingLogger();
    const handler = new IdempotencyHandler(store, undefined, { heartbeatIntervalMs: 0, logger });
    let runs = 0;
    expect(await outcome(handler.execute(payment, async () => ++runs))).toMatchObject({ code: "STORE_UNAVAILABLE" });

    await expect.poll(() => harness.store.get(payment)).toBeUndefined();
    expect(await handler.execute(payment, async () => ++runs)).toEqual({ response: 1, replayed: false });
    expect(logger.lines).toContainEqual(expect.objectContaining({ level: "warn", status: "RELEASED", key: "k-1" }));
    await harness.close();
  });

  it("a live execution that outlasts the TTL keeps its key: the heartbeat renews the record's expiry", async () => {
    const harness = await opened.fresh();
    const ttlMs = 60 * MINUTE;
    let beats = 0;
    const store = Object.assign(Object.create(harness.store) as IdempotencyStore, {
      heartbeat: async (...args: Parameters<IdempotencyStore["heartbeat"]>) => {
        const held = await harness.store.heartbeat(...args);
        if (held) beats++;
        return held;
      },
    });
    const handler = new IdempotencyHandler(store, undefined, { heartbeatIntervalMs: 10, ttlMs });
    const gate = deferred<string>();
    let runs = 0;
    const first = handler.execute(payment, async () => (runs++, gate.promise));
    await expect.poll(() => store.get(payment)).toBeDefined();

    // Three quarters of a TTL at a time, a beat in between: the execution outlives its TTL twice over.
    for (let step = 0; step < 3; step++) {
      await harness.advanceTime(0.75 * ttlMs);
      const before = beats;
      await expect.poll(() => beats).toBeGreaterThan(before);
    }
    expect(await store.get(payment)).toMatchObject({ status: "PROCESSING" });
    expect(await handler.cleanupExpiredRecords()).toEqual({ deleted: 0 });
    expect(await outcome(handler.execute(payment, async () => (runs++, "again")))).toMatchObject({
      code: "REQUEST_IN_PROGRESS",
    });

    gate.resolve("charged");
    expect(await first).toEqual({ response: "charged", replayed: false });
    expect(runs).toBe(1);
    await harness.close();
  });
});
