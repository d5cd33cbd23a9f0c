// Issue 25: "the rate limiter fails open under the attacker's own burst". 600 concurrent requests of one
// caller, limit 5, on every store: healthy, and slowed past the limiter's timeout in each onStoreError mode.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RateLimiter, type RateLimiterOptions } from "@/blocks/rate-limiter/limiter";
import type { RateLimitStore } from "@/blocks/rate-limiter/types";
import { allStoreKinds, type StoreKind } from "./support/stores";

const BURST = 600;
const LIMIT = 5;

/** The store still decides (and counts) every call, but its answer arrives after `ms`: past the limiter's timeout. */
function answersLate(store: RateLimitStore, ms: number): RateLimitStore {
  return {
    take: async (key, rate) => {
      const answer = await store.take(key, rate);
      await new Promise((resolve) => setTimeout(resolve, ms));
      return answer;
    },
  };
}

/** The store throws for its first `failures` calls (a pool still connecting), then decides and counts as usual. */
function failsFirst(store: RateLimitStore, failures: number): RateLimitStore {
  let calls = 0;
  return {
    take: async (key, rate) => {
      if (calls++ < failures) throw new Error("connect ECONNREFUSED");
      return store.take(key, rate);
    },
  };
}

async function burst(store: RateLimitStore, options: Partial<RateLimiterOptions> = {}) {
  const limiter = new RateLimiter(store, { name: "burst", limit: LIMIT, windowMs: 60_000, ...options });
  const outcomes = await Promise.all(
    Array.from({ length: BURST }, () =>
      limiter.check("user:attacker").then(
        (decision) => (decision.allowed ? "allowed" : "limited"),
        () => "unavailable",
      ),
    ),
  );
  return {
    admitted: outcomes.filter((o) => o === "allowed").length,
    unavailable: outcomes.filter((o) => o === "unavailable").length,
  };
}

for (const kind of allStoreKinds) {
  describe.skipIf(!kind.available)(
    `${kind.name}: fails open under the attacker's own burst`,
    { timeout: 60_000 },
    () => {
      let server: Awaited<ReturnType<StoreKind["open"]>>;
      beforeAll(async () => {
        server = await kind.open();
      }, 120_000);
      afterAll(() => server.close());

      async function withFresh<T>(run: (store: RateLimitStore) => Promise<T>): Promise<T> {
        const { store, close } = await server.fresh();
        try {
          return await run(store);
        } finally {
          // Let the late answers land before the table or keys go.
          await new Promise((resolve) => setTimeout(resolve, 350));
          await close();
        }
      }

      it(`${BURST} concurrent requests, limit ${LIMIT}, default options: at most ${LIMIT} pass`, async () => {
        const { admitted } = await withFresh((store) => burst(store));
        expect(admitted).toBeLessThanOrEqual(LIMIT);
        expect(admitted).toBeGreaterThanOrEqual(1);
      });

      it("every answer later than timeoutMs (insurance, the default): at most limit pass", async () => {
        const { admitted } = await withFresh((store) => burst(answersLate(store, 300), { timeoutMs: 50 }));
        expect(admitted).toBeLessThanOrEqual(LIMIT);
      });

      it("every answer late, no in-flight bound: the insurance alone still holds the limit", async () => {
        const { admitted } = await withFresh((store) =>
          burst(answersLate(store, 300), { timeoutMs: 50, maxInFlight: 1_000_000 }),
        );
        expect(admitted).toBeLessThanOrEqual(LIMIT);
      });

      it("a store that fails its first calls, then recovers (a cold start): one process still admits at most limit in the window", async () => {
        const { admitted } = await withFresh(async (store) => {
          const limiter = new RateLimiter(failsFirst(store, LIMIT), { name: "cold", limit: LIMIT, windowMs: 60_000 });
          const wave = async (size: number) =>
            (await Promise.all(Array.from({ length: size }, () => limiter.check("user:attacker")))).filter(
              (d) => d.allowed,
            ).length;
          // The insurance decides the first wave; the store, recovered and knowing none of it, would admit the second.
          return { admitted: (await wave(LIMIT)) + (await wave(BURST)) };
        });
        expect(admitted).toBe(LIMIT);
      });

      it('every answer late, onStoreError "allow": the in-flight bound keeps what passes uncounted to limit', async () => {
        const { admitted } = await withFresh((store) =>
          burst(answersLate(store, 300), { timeoutMs: 50, onStoreError: "allow" }),
        );
        expect(admitted).toBeLessThanOrEqual(LIMIT);
      });

      it('every answer late, onStoreError "deny": none pass, limit answer 503, the rest 429', async () => {
        const { admitted, unavailable } = await withFresh((store) =>
          burst(answersLate(store, 300), { timeoutMs: 50, onStoreError: "deny" }),
        );
        expect(admitted).toBe(0);
        expect(unavailable).toBe(LIMIT);
      });
    },
  );
}
