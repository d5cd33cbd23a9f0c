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
  return { admitted: outcomes.filter((o) => o === "allowed").length, unavailable: outcomes.filter((o) => o === "unavailable").length };
}

for (const kind of allStoreKinds) {
  describe.skipIf(!kind.available)(`${kind.name}: fails open under the attacker's own burst`, { timeout: 60_000 }, () => {
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
      const { admitted } = await withFresh((store) => burst(answersLate(store, 300), { timeoutMs: 50, maxInFlight: 1_000_000 }));
      expect(admitted).toBeLessThanOrEqual(LIMIT);
    });

    it('every answer late, onStoreError "allow": the in-flight bound keeps what passes uncounted to limit', async () => {
      const { admitted } = await withFresh((store) => burst(answersLate(store, 300), { timeoutMs: 50, onStoreError: "allow" }));
      expect(admitted).toBeLessThanOrEqual(LIMIT);
    });

    it('every answer late, onStoreError "deny": none pass, limit answer 503, the rest 429', async () => {
      const { admitted, unavailable } = await withFresh((store) => burst(answersLate(store, 300), { timeoutMs: 50, onStoreError: "deny" }));
      expect(admitted).toBe(0);
      expect(unavailable).toBe(LIMIT);
    });
  });
}
