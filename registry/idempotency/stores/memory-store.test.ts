// MemoryStore's own promise beyond the shared contract: it stays bounded.
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemoryStore } from "./memory-store";

const scope = (key: string, userId = "u") => ({ operation: "op", userId, key });

describe("MemoryStore bounds", () => {
  it("evicts expired, then the oldest completed records, when full", async () => {
    let now = 0;
    const store = new MemoryStore({ maxRecords: 3, now: () => now });
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
    await store.create({ scope: scope("a"), requestHash: "h", ttlMs: 1_000, token: randomUUID() });
    await store.create({ scope: scope("b"), requestHash: "h", ttlMs: 1_000, token: randomUUID() });
    await expect(store.create({ scope: scope("c"), requestHash: "h", ttlMs: 1_000, token: randomUUID() })).rejects.toThrow(/MemoryStore is full/);
  });

  it("does not sweep every record on each create once full (regression: O(records) per request)", async () => {
    let clockReads = 0;
    const store = new MemoryStore({ maxRecords: 1_000, now: () => (clockReads++, 0) });
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
    expect(await store.create({ scope: scope("bob-order", "bob"), requestHash: "h", ttlMs: 60_000, token: randomUUID() })).toEqual({ status: "CREATED" });
  });

  it("keeps other users' retry counters when the flooder fills the counters", async () => {
    const store = new MemoryStore({ maxRecords: 50 });
    await store.incrementRetryCount(scope("alice-order", "alice"), 60_000);
    for (let i = 0; i < 500; i++) await store.incrementRetryCount(scope(`flood-${i}`, "mallory"), 60_000);
    expect(await store.incrementRetryCount(scope("alice-order", "alice"), 60_000)).toBe(2);
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

