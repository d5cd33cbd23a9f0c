// The IdempotencyCache contract, written once and run against every cache implementation.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CachedRecord, CacheScope, IdempotencyCache } from "@/blocks/idempotency/types";

export type CacheKind = {
  name: string;
  /** False for caches allowed to forget everything (the no-op default). */
  remembers: boolean;
  open(): Promise<{ cache: IdempotencyCache; close(): Promise<void> }>;
};

const success: CachedRecord = { requestHash: "hash-a", status: "SUCCESS", response: '{"z":1,"a":[2,1]}' };
const failed: CachedRecord = { requestHash: "hash-b", status: "FAILED", response: null };

/** Registers the contract suite: a cache may forget, but never answers for the wrong scope or past its TTL. */
export function describeCacheContract(kind: CacheKind): void {
  describe(`IdempotencyCache contract: ${kind.name}`, () => {
    let cache: IdempotencyCache;
    let close: () => Promise<void>;
    let n = 0;
    const scope = (): CacheScope => ({
      namespace: "idempotency_records",
      operation: "payments:create",
      userId: "u_1",
      key: `cache-${Date.now()}-${++n}`,
    });
    const expectRemembered = (actual: unknown, expected: CachedRecord) =>
      kind.remembers ? expect(actual).toEqual(expected) : expect(actual).toBeUndefined();

    beforeAll(async () => {
      ({ cache, close } = await kind.open());
    });
    afterAll(async () => close());

    it("returns nothing for a scope it never saw", async () => {
      expect(await cache.get(scope())).toBeUndefined();
    });

    it("returns completed records exactly as stored, response bytes included", async () => {
      const a = scope();
      const b = scope();
      await cache.set(a, success, 60_000);
      await cache.set(b, failed, 60_000);
      expectRemembered(await cache.get(a), success);
      expectRemembered(await cache.get(b), failed);
    });

    it("never answers for another user or operation", async () => {
      const s = scope();
      await cache.set(s, success, 60_000);
      expect(await cache.get({ ...s, userId: "u_2" })).toBeUndefined();
      expect(await cache.get({ ...s, operation: "refunds:create" })).toBeUndefined();
    });

    // Regression (issue 12, point 9): two handlers on different tables sharing one Redis answered from each other's entries.
    it("never answers for another store (namespace)", async () => {
      const s = scope();
      await cache.set(s, success, 60_000);
      expect(await cache.get({ ...s, namespace: "other_records" })).toBeUndefined();
    });

    it("forgets a record once its TTL has passed, and stores nothing for a TTL of zero", async () => {
      const short = scope();
      const none = scope();
      await cache.set(short, success, 30);
      await cache.set(none, success, 0);
      await new Promise((resolve) => setTimeout(resolve, 80));
      expect(await cache.get(short)).toBeUndefined();
      expect(await cache.get(none)).toBeUndefined();
    });
  });
}
