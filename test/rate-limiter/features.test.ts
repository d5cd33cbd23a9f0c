// Issue 31 point 1 on every store and every framework adapter: cost, per-caller limits, the block cache
// (a refused caller costs no store round trip), bans, skip, allow and deny lists (these two where a runtime
// has a client address: not on fetch runtimes).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RateLimiter, type RateLimiterOptions } from "@/blocks/rate-limiter/limiter";
import { MemoryRateLimitStore } from "@/blocks/rate-limiter/stores/memory-store";
import type { RateLimitStore } from "@/blocks/rate-limiter/types";
import { fetchApp, identityFrameworks, type IdentityFramework } from "./support/identity-apps";
import { allStoreKinds, type StoreKind } from "./support/stores";

/** The store, counting the calls that reach it. */
function counting(store: RateLimitStore): RateLimitStore & { calls: number } {
  const counted = {
    calls: 0,
    take: (key: string, rate: Parameters<RateLimitStore["take"]>[1]) => (counted.calls++, store.take(key, rate)),
  };
  return counted;
}

for (const kind of allStoreKinds) {
  describe.skipIf(!kind.available)(
    `${kind.name}: cost, limits per caller, block cache, ban`,
    { timeout: 60_000 },
    () => {
      let server: Awaited<ReturnType<StoreKind["open"]>>;
      beforeAll(async () => {
        server = await kind.open();
      }, 120_000);
      afterAll(() => server.close());

      async function withLimiter(
        options: Partial<RateLimiterOptions>,
        run: (limiter: RateLimiter, store: { calls: number }) => Promise<void>,
      ) {
        const { store, close } = await server.fresh();
        const countingStore = counting(store);
        try {
          // A generous timeout: these tests are about the features, not a store slowed by parallel suites.
          await run(
            new RateLimiter(countingStore, {
              name: "features",
              limit: 4,
              windowMs: 60_000,
              timeoutMs: 10_000,
              ...options,
            }),
            countingStore,
          );
        } finally {
          await close();
        }
      }

      it("a request of cost 3 takes 3 of the quota", () =>
        withLimiter({}, async (limiter) => {
          expect(await limiter.check("u_1", { cost: 3 })).toMatchObject({ allowed: true, remaining: 1 });
          expect((await limiter.check("u_1", { cost: 2 })).allowed).toBe(false);
          expect(await limiter.check("u_1")).toMatchObject({ allowed: true, remaining: 0 });
        }));

      it("a caller's own limit: 6 for one, the policy's 4 for another", () =>
        withLimiter({}, async (limiter) => {
          const big = await Promise.all(Array.from({ length: 8 }, () => limiter.check("big", { limit: 6 })));
          const small = await Promise.all(Array.from({ length: 8 }, () => limiter.check("small")));
          expect(big.filter((d) => d.allowed)).toHaveLength(6);
          expect(small.filter((d) => d.allowed)).toHaveLength(4);
        }));

      it("a refused caller costs 0 store round trips until its Retry-After; an allowed request 1", () =>
        withLimiter({}, async (limiter, store) => {
          for (let i = 0; i < 5; i++) await limiter.check("u_1");
          expect(store.calls).toBe(5);
          for (let i = 0; i < 50; i++) expect((await limiter.check("u_1")).allowed).toBe(false);
          expect(store.calls).toBe(5);
        }));

      it("after 3 refusals, 403 RATE_LIMIT_BANNED, with no store call", () =>
        withLimiter({ limit: 1, ban: { after: 3, withinMs: 60_000, forMs: 60_000 } }, async (limiter, store) => {
          const decisions = [];
          for (let i = 0; i < 6; i++) decisions.push(await limiter.check("u_1"));
          expect(decisions.map((d) => d.banned)).toEqual([false, false, false, false, true, true]);
          expect(store.calls).toBe(2);
          await expect(limiter.consume("u_1")).rejects.toMatchObject({ code: "RATE_LIMIT_BANNED", status: 403 });
        }));
    },
  );
}

/**
 * Six anonymous POSTs from 127.0.0.1 through the framework's adapter, with these route options; `store`
 * counts the decisions that reached the store.
 */
async function statuses(
  framework: IdentityFramework,
  options: Parameters<IdentityFramework["serve"]>[1],
  limiterOptions: Partial<RateLimiterOptions> = {},
  store: RateLimitStore = new MemoryRateLimitStore(),
) {
  const app = await framework.serve(
    new RateLimiter(store, { name: "payments", limit: 3, windowMs: 60_000, ...limiterOptions }),
    options,
  );
  try {
    const result: Array<[number, string | null]> = [];
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${app.base}/accounts/acc_1/payments`, { method: "POST" });
      const body = (await res.text()) || "{}";
      result.push([
        res.status,
        (JSON.parse(body) as { error?: { code?: string } }).error?.code ?? res.headers.get("ratelimit"),
      ]);
    }
    return result;
  } finally {
    await app.close();
  }
}

for (const framework of [...identityFrameworks, fetchApp]) {
  const noAddress = framework === fetchApp;
  describe(`${framework.name}: route options of issue 31`, { timeout: 30_000 }, () => {
    it("cost: two units per request, limit 3: one passes", async () => {
      expect((await statuses(framework, { cost: () => 2 })).map(([s]) => s)).toEqual([201, 429, 429, 429, 429, 429]);
    });

    it("limit per caller: 5 for this caller, the RateLimit headers say so", async () => {
      const replies = await statuses(framework, { limit: () => 5 });
      expect(replies.map(([s]) => s)).toEqual([201, 201, 201, 201, 201, 429]);
      expect(replies[0]?.[1]).toBe('"payments";r=4;t=12');
    });

    it("skip: never limited, no headers, no store call", async () => {
      const store = counting(new MemoryRateLimitStore());
      expect(await statuses(framework, { skip: () => true }, {}, store)).toEqual(Array(6).fill([201, null]));
      expect(store.calls).toBe(0);
    });

    it.skipIf(noAddress)("an allow list: never limited, no headers", async () => {
      expect(await statuses(framework, { allowList: ["127.0.0.0/8", "::1"] })).toEqual(Array(6).fill([201, null]));
    });

    it("block cache: once refused, the caller's requests reach the store no more until its Retry-After", async () => {
      const store = counting(new MemoryRateLimitStore());
      expect((await statuses(framework, {}, {}, store)).map(([s]) => s)).toEqual([201, 201, 201, 429, 429, 429]);
      expect(store.calls).toBe(4);
    });

    it.skipIf(noAddress)("a deny list: 403 RATE_LIMIT_BANNED from the first request", async () => {
      expect(await statuses(framework, { denyList: ["127.0.0.1"] })).toEqual(Array(6).fill([403, "RATE_LIMIT_BANNED"]));
    });

    it("ban: after 2 refusals, 403 RATE_LIMIT_BANNED", async () => {
      const replies = await statuses(framework, {}, { ban: { after: 2, withinMs: 60_000, forMs: 60_000 } });
      expect(replies.map(([s]) => s)).toEqual([201, 201, 201, 429, 429, 403]);
      expect(replies[5]?.[1]).toBe("RATE_LIMIT_BANNED");
    });
  });
}
