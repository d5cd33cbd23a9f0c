// Issue 25, "client-chosen identity", on every framework: the client address counts proxy hops from our side
// (never the leftmost X-Forwarded-For), IPv6 callers are keyed by their /56, and routes by their template.
import { describe, expect, it } from "vitest";
import { RateLimiter } from "@/blocks/rate-limiter/limiter";
import { MemoryRateLimitStore } from "@/blocks/rate-limiter/stores/memory-store";
import { identityFrameworks, type IdentityFramework } from "./support/identity-apps";

const LIMIT = 3;

/** Six anonymous POSTs, each with the headers `headersOf(i)` returns, to the account `accountOf(i)`. */
async function statuses(
  framework: IdentityFramework,
  options: Parameters<IdentityFramework["serve"]>[1],
  headersOf: (i: number) => Record<string, string>,
  accountOf: (i: number) => string = () => "acc_1",
): Promise<number[]> {
  const app = await framework.serve(
    new RateLimiter(new MemoryRateLimitStore(), { name: "payments", limit: LIMIT, windowMs: 60_000 }),
    options,
  );
  try {
    const result: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${app.base}/accounts/${accountOf(i)}/payments`, {
        method: "POST",
        headers: headersOf(i),
      });
      await res.arrayBuffer();
      result.push(res.status);
    }
    return result;
  } finally {
    await app.close();
  }
}

const LIMITED = [201, 201, 201, 429, 429, 429];

for (const framework of identityFrameworks) {
  describe(`${framework.name}: client-chosen identity`, { timeout: 30_000 }, () => {
    it("trustProxy 1: rotating the leftmost X-Forwarded-For entry buys no quota", async () => {
      expect(
        await statuses(framework, { trustProxy: 1 }, (i) => ({ "x-forwarded-for": `198.51.100.${i}, 203.0.113.7` })),
      ).toEqual(LIMITED);
    });

    it("by default (no proxy trusted) X-Forwarded-For is ignored: the socket's address is the caller", async () => {
      expect(await statuses(framework, {}, (i) => ({ "x-forwarded-for": `198.51.100.${i}` }))).toEqual(LIMITED);
    });

    it("trustProxy as a list: addresses of our proxies are skipped, the first other one is the caller", async () => {
      const headersOf = (i: number) => ({ "x-forwarded-for": `198.51.100.${i}, 203.0.113.7, 10.0.0.2` });
      expect(await statuses(framework, { trustProxy: ["127.0.0.1", "10.0.0.0/8"] }, headersOf)).toEqual(LIMITED);
    });

    it("IPv6 callers are keyed by their /56: rotating inside one's /64 (and /56) buys no quota", async () => {
      const headersOf = (i: number) => ({ "x-forwarded-for": `2001:db8:aa:bb0${i}::${i + 1}` });
      expect(await statuses(framework, { trustProxy: 1 }, headersOf)).toEqual(LIMITED);
    });

    it("a router mounted at /accounts/:accountId is keyed by its template: one quota across account ids", async () => {
      expect(
        await statuses(
          framework,
          {},
          () => ({}),
          (i) => `acc_${i}`,
        ),
      ).toEqual(LIMITED);
    });

    it('keyBy "idempotencyKey": K and "K" (one key to the idempotency block) are one quota', async () => {
      const headersOf = (i: number) => ({ "idempotency-key": i % 2 === 0 ? "k-1" : '"k-1"' });
      expect(await statuses(framework, { keyBy: "idempotencyKey" }, headersOf)).toEqual(LIMITED);
    });
  });
}
