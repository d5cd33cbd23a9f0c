// MemoryStore's own promise beyond the shared contract: it stays bounded.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { MemoryStore } from "./memory-store";

const scope = (key: string) => ({ operation: "op", userId: "u", key });

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
