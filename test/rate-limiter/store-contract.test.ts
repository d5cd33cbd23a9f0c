// The RateLimitStore contract, run against every store: GCRA's answers, atomicity within a process, refill.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { rateOf } from "@/blocks/rate-limiter/gcra";
import type { RateLimitStore } from "@/blocks/rate-limiter/types";
import { allStoreKinds, type OpenStore, type StoreKind } from "./support/stores";

const tenPerHour = rateOf({ name: "p", limit: 10, windowMs: 3_600_000 });

for (const kind of allStoreKinds) {
  describe.skipIf(!kind.available)(kind.name, { timeout: 60_000 }, () => {
    let server: Awaited<ReturnType<StoreKind["open"]>>;
    let opened: OpenStore;
    let store: RateLimitStore;
    beforeAll(async () => {
      server = await kind.open();
    }, 120_000);
    afterAll(() => server.close());
    beforeEach(async () => {
      opened = await server.fresh();
      store = opened.store;
    });
    afterEach(() => opened.close());

    it("allows a fresh key a burst of exactly `limit`, then refuses", async () => {
      const answers = [];
      for (let i = 0; i < 12; i++) answers.push(await store.take("k", tenPerHour));
      expect(answers.map((a) => a.allowed)).toEqual([...Array(10).fill(true), false, false]);
    });

    it("answers with the TAT after the attempt and the store's own clock", async () => {
      const first = await store.take("k", tenPerHour);
      expect(first.tat - first.now).toBe(tenPerHour.intervalUs);
      expect(Math.abs(first.now / 1000 - Date.now())).toBeLessThan(60_000);
    });

    it("a refusal leaves the debt as it was (refused requests cost nothing)", async () => {
      for (let i = 0; i < 10; i++) await store.take("k", tenPerHour);
      const refused = await store.take("k", tenPerHour);
      const again = await store.take("k", tenPerHour);
      expect(refused.allowed).toBe(false);
      expect(again.tat).toBe(refused.tat);
      expect(refused.tat - refused.now).toBeLessThanOrEqual(tenPerHour.capacityUs);
    });

    it("keeps keys apart", async () => {
      for (let i = 0; i < 10; i++) await store.take("a", tenPerHour);
      expect((await store.take("a", tenPerHour)).allowed).toBe(false);
      expect((await store.take("b", tenPerHour)).allowed).toBe(true);
    });

    it("lets exactly `limit` of many concurrent attempts through", async () => {
      const answers = await Promise.all(Array.from({ length: 40 }, () => store.take("k", tenPerHour)));
      expect(answers.filter((a) => a.allowed)).toHaveLength(10);
    });

    it("refills one request per interval", async () => {
      // 2 per 300 ms: the wait is one interval (150 ms) plus slack, on the store's own clock.
      const fast = rateOf({ name: "p", limit: 2, windowMs: 300 });
      await store.take("k", fast);
      await store.take("k", fast);
      const refused = await store.take("k", fast);
      expect(refused.allowed).toBe(false);
      await new Promise((resolve) =>
        setTimeout(resolve, (refused.tat + fast.intervalUs - fast.capacityUs - refused.now) / 1000 + 30),
      );
      expect((await store.take("k", fast)).allowed).toBe(true);
    });

    it("limit > windowMs: keeps a sub-millisecond interval (200 per 100 ms refills 200 in 100 ms, not 100)", async () => {
      const twoPerMs = rateOf({ name: "p", limit: 200, windowMs: 100 });
      const first = await store.take("k", twoPerMs);
      expect(first.tat - first.now).toBe(500);
      const burst = () => Promise.all(Array.from({ length: 200 }, () => store.take("fast", twoPerMs)));
      expect((await burst()).filter((a) => a.allowed)).toHaveLength(200);
      await new Promise((resolve) => setTimeout(resolve, 120));
      expect((await burst()).filter((a) => a.allowed)).toHaveLength(200);
    });

    it("a backward clock step costs a key one interval, not the whole step", async () => {
      const fast = rateOf({ name: "p", limit: 2, windowMs: 200 });
      await opened.stepBack("k", 3_600_000);
      expect((await store.take("k", fast)).allowed).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, fast.intervalUs / 1000 + 30));
      expect((await store.take("k", fast)).allowed).toBe(true);
    });

    it("takes keys of any content: long, unicode, JSON", async () => {
      const key = JSON.stringify(["POST /payments", "user:ü_1", "k".repeat(255)]);
      expect((await store.take(key, tenPerHour)).allowed).toBe(true);
    });
  });
}
