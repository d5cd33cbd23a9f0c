// MemoryStore's own promise beyond the shared contract: it stays bounded.
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import { IdempotencyHandler } from "../handler";
import { MemoryStore } from "./memory-store";

const scope = (key: string, userId = "u") => ({ operation: "op", userId, key });

describe("MemoryStore bounds", () => {
  it("evicts expired, then the oldest completed records, when full", async () => {
    let now = 0;
    const store = new MemoryStore({ maxRecords: 3, maxInProgressPerUser: 3, now: () => now });
    const created = async (key: string, ttlMs = 1_000) => {
      const token = randomUUID();
      const result = await store.create({ scope: scope(key), requestHash: "h", ttlMs, token });
      if (result.status !== "CREATED") throw new Error("expected CREATED");
      return token;
    };
    await created("expiring", 10);
    await store.markSuccess(scope("done"), await created("done"), '"ok"', 1_000);
    await created("running");
    now = 20;
    await created("fourth");
    expect(await store.get(scope("expiring"))).toBeUndefined();
    await created("fifth");
    expect(await store.get(scope("done"))).toBeUndefined();
    expect(await store.get(scope("running"))).toMatchObject({ status: "PROCESSING" });
  });

  it("refuses a new record rather than evict a running execution", async () => {
    const store = new MemoryStore({ maxRecords: 2 });
    await store.create({ scope: scope("a", "ann"), requestHash: "h", ttlMs: 1_000, token: randomUUID() });
    await store.create({ scope: scope("b", "bob"), requestHash: "h", ttlMs: 1_000, token: randomUUID() });
    await expect(
      store.create({ scope: scope("c", "cat"), requestHash: "h", ttlMs: 1_000, token: randomUUID() }),
    ).rejects.toThrow(/MemoryStore is full/);
  });

  it("does not sweep every record on each create once full (regression: O(records) per request)", async () => {
    let clockReads = 0;
    const store = new MemoryStore({
      maxRecords: 1_000,
      now: () => {
        clockReads++;
        return 0;
      },
    });
    for (let i = 0; i < 1_000; i++) {
      const token = randomUUID();
      const created = await store.create({ scope: scope(`k${i}`), requestHash: "h", ttlMs: 1_000, token });
      if (created.status === "CREATED") await store.markSuccess(scope(`k${i}`), token, '"ok"', 1_000);
    }
    await store.create({ scope: scope("first-over"), requestHash: "h", ttlMs: 1_000, token: randomUUID() });
    clockReads = 0;
    await store.create({ scope: scope("second-over"), requestHash: "h", ttlMs: 1_000, token: randomUUID() });
    expect(clockReads).toBeLessThan(20);
  });
});

// Regression: one user's flood of keys evicted other users' completed records
// (their retries ran again), refused everyone once full, and reset their retry budgets.
describe("MemoryStore under one user's flood", () => {
  const completed = async (store: MemoryStore, key: string, userId: string) => {
    const token = randomUUID();
    await store.create({ scope: scope(key, userId), requestHash: "h", ttlMs: 60_000, token });
    await store.markSuccess(scope(key, userId), token, '"charged"', 60_000);
  };

  it("evicts only the flooding user's records, never another user's unexpired completed record", async () => {
    const store = new MemoryStore({ maxRecords: 100 });
    await completed(store, "alice-order", "alice");
    for (let i = 0; i < 1_000; i++) await completed(store, `flood-${i}`, "mallory");
    expect(await store.get(scope("alice-order", "alice"))).toMatchObject({ status: "SUCCESS", response: '"charged"' });
    // And others can still create: the flood does not refuse everyone.
    expect(
      await store.create({ scope: scope("bob-order", "bob"), requestHash: "h", ttlMs: 60_000, token: randomUUID() }),
    ).toMatchObject({ status: "CREATED" });
  });

  it("10,000 in-progress keys of one user never refuse another user (regression: they filled the store and every other user got STORE_UNAVAILABLE)", async () => {
    const store = new MemoryStore();
    let refused = 0;
    for (let i = 0; i < 10_000; i++) {
      await store
        .create({ scope: scope(`flood-${i}`, "mallory"), requestHash: "h", ttlMs: 60_000, token: randomUUID() })
        .catch(() => refused++);
    }
    // The default bound: 1 % of maxRecords (10,000) in progress per user.
    expect(refused).toBe(9_900);
    await expect(
      store.create({ scope: scope("flood-next", "mallory"), requestHash: "h", ttlMs: 60_000, token: randomUUID() }),
    ).rejects.toThrow(/maxInProgressPerUser/);
    for (let i = 0; i < 5_000; i++) {
      expect(
        await store.create({
          scope: scope(`order-${i}`, `user-${i}`),
          requestHash: "h",
          ttlMs: 60_000,
          token: randomUUID(),
        }),
      ).toMatchObject({ status: "CREATED" });
    }
  });

  it("through the handler, only the flooding user gets STORE_UNAVAILABLE; another user's request runs", async () => {
    const handler = new IdempotencyHandler(new MemoryStore({ maxRecords: 1_000 }), undefined, {
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    });
    const hanging = new Promise<never>(() => {});
    for (let i = 0; i < 10; i++)
      void handler.execute({ operation: "op", userId: "mallory", key: `flood-${i}`, payload: {} }, () => hanging);
    await expect(
      handler.execute({ operation: "op", userId: "mallory", key: "flood-next", payload: {} }, () => "ran"),
    ).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
    expect(await handler.execute({ operation: "op", userId: "alice", key: "order", payload: {} }, () => "ran")).toEqual(
      { response: "ran", replayed: false },
    );
  });

  it("refuses a maxInProgressPerUser below 1, which would refuse every key", () => {
    expect(() => new MemoryStore({ maxInProgressPerUser: 0 })).toThrow(
      /maxInProgressPerUser must be at least 1, got 0/,
    );
  });

  it("frees a user's in-progress slot when a record completes, is released, recovered or expires", async () => {
    let now = 0;
    const store = new MemoryStore({ maxInProgressPerUser: 2, now: () => now });
    const start = async (key: string, ttlMs = 60_000) => {
      const token = randomUUID();
      expect(await store.create({ scope: scope(key, "mallory"), requestHash: "h", ttlMs, token })).toMatchObject({
        status: "CREATED",
      });
      return token;
    };
    const full = () =>
      expect(
        store.create({ scope: scope(`over-${now}`, "mallory"), requestHash: "h", ttlMs: 60_000, token: randomUUID() }),
      ).rejects.toThrow(/maxInProgressPerUser/);
    const a = await start("a");
    const b = await start("b");
    await full();
    await store.markSuccess(scope("a", "mallory"), a, '"ok"', 60_000);
    const c = await start("c");
    await full();
    await store.release(scope("b", "mallory"), b);
    await start("d");
    await full();
    now = 10_000;
    expect(
      await store.recoverStuckRecords({ olderThanMs: 5_000, limit: 1, maxRetries: 3, ttlMs: 60_000 }),
    ).toHaveLength(1);
    await start("e", 100);
    await full();
    now = 20_000; // "e" expired without anyone recovering it: it no longer counts.
    await start("f");
    expect(await store.markFailed(scope("c", "mallory"), c, 60_000)).toBe(false); // "c" was the one recovered.
  });

  it("a full store evicts the biggest holder of completed records, passing over a bigger holder whose records are all in progress", async () => {
    const store = new MemoryStore({ maxRecords: 10, maxInProgressPerUser: 4 });
    for (let i = 0; i < 4; i++)
      await store.create({
        scope: scope(`running-${i}`, "mallory"),
        requestHash: "h",
        ttlMs: 60_000,
        token: randomUUID(),
      });
    for (let i = 0; i < 3; i++) await completed(store, `done-${i}`, "alice");
    for (let i = 0; i < 3; i++) await completed(store, `done-${i}`, `user-${i}`);
    expect(
      await store.create({ scope: scope("new", "bob"), requestHash: "h", ttlMs: 60_000, token: randomUUID() }),
    ).toMatchObject({ status: "CREATED" });
    expect(await store.get(scope("done-0", "alice"))).toBeUndefined();
    expect(await store.get(scope("running-0", "mallory"))).toMatchObject({ status: "PROCESSING" });
  });

  it("keeps other users' retry counters when the flooder fills the counters", async () => {
    const store = new MemoryStore({ maxRecords: 50 });
    await store.incrementRetryCount(scope("alice-order", "alice"), 60_000);
    for (let i = 0; i < 500; i++) await store.incrementRetryCount(scope(`flood-${i}`, "mallory"), 60_000);
    expect(await store.incrementRetryCount(scope("alice-order", "alice"), 60_000)).toBe(2);
  });
});

// A replay reads the stored record without a copy: what a caller gets must still never change what is stored.
describe("MemoryStore isolation", () => {
  const duplicate = async (store: MemoryStore, key: string) => {
    const found = await store.create({ scope: scope(key), requestHash: "other", ttlMs: 60_000, token: randomUUID() });
    if (found.status !== "DUPLICATE") throw new Error("expected DUPLICATE");
    return found.record;
  };

  it("a caller can change neither the record a duplicate gets nor its dates, and the next duplicate sees the stored one", async () => {
    const store = new MemoryStore({ now: () => 1_000 });
    const token = randomUUID();
    await store.create({ scope: scope("paid"), requestHash: "h", ttlMs: 60_000, token });
    await store.markSuccess(scope("paid"), token, '"charged"', 60_000);
    const record = await duplicate(store, "paid");
    // One object for every replay, not a copy per call.
    expect(await duplicate(store, "paid")).toBe(record);
    expect(() => Object.assign(record, { status: "PROCESSING", response: '"forged"', token: "stolen" })).toThrow(
      TypeError,
    );
    expect(() => record.expiresAt.setTime(0)).toThrow(TypeError);
    expect(() => record.updatedAt.setFullYear(1970)).toThrow(TypeError);
    expect(await duplicate(store, "paid")).toMatchObject({
      status: "SUCCESS",
      response: '"charged"',
      token,
      expiresAt: new Date(61_000),
    });
    const read = await store.get(scope("paid"));
    expect(() => read?.expiresAt.setTime(0)).toThrow(TypeError);
    expect(await store.get(scope("paid"))).toMatchObject({ expiresAt: new Date(61_000), updatedAt: new Date(1_000) });
  });

  it("a record handed out while running keeps what it said; the store still completes, renews and frees the key", async () => {
    let now = 0;
    const store = new MemoryStore({ now: () => now });
    const token = randomUUID();
    await store.create({ scope: scope("running"), requestHash: "h", ttlMs: 60_000, token });
    const seen = await duplicate(store, "running");
    now = 10;
    expect(await store.heartbeat(scope("running"), token, 60_000)).toBe(true);
    expect(await store.markSuccess(scope("running"), token, '"done"', 60_000)).toBe(true);
    expect(seen).toMatchObject({ status: "PROCESSING", response: null, updatedAt: new Date(0) });
    expect(await duplicate(store, "running")).toMatchObject({
      status: "SUCCESS",
      response: '"done"',
      updatedAt: new Date(10),
    });
    const again = randomUUID();
    await store.create({ scope: scope("released"), requestHash: "h", ttlMs: 60_000, token: again });
    await duplicate(store, "released");
    expect(await store.release(scope("released"), again)).toBe(true);
    expect(
      await store.create({ scope: scope("released"), requestHash: "h", ttlMs: 60_000, token: randomUUID() }),
    ).toMatchObject({ status: "CREATED" });
  });
});

describe("MemoryStore in production", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  it("warns once that it is for development", async () => {
    vi.resetModules();
    const emitWarning = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
    vi.stubEnv("NODE_ENV", "production");
    const { MemoryStore: FreshMemoryStore } = await import("./memory-store");
    new FreshMemoryStore();
    new FreshMemoryStore();
    expect(emitWarning).toHaveBeenCalledTimes(1);
    expect(emitWarning).toHaveBeenCalledWith(expect.stringContaining("development"), expect.anything());
  });
});
