// Headers and 429 on every framework over every store; insurance, fail open and fail closed as the client sees them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RateLimiter } from "@/blocks/rate-limiter/limiter";
import type { RateLimitStore } from "@/blocks/rate-limiter/types";
import { frameworks } from "./support/http-apps";
import { allStoreKinds, type StoreKind } from "./support/stores";

const down: RateLimitStore = { take: () => Promise.reject(new Error("ECONNREFUSED")) };

for (const kind of allStoreKinds) {
  describe.skipIf(!kind.available)(`${kind.name} over HTTP`, { timeout: 60_000 }, () => {
    let server: Awaited<ReturnType<StoreKind["open"]>>;
    beforeAll(async () => {
      server = await kind.open();
    }, 120_000);
    afterAll(() => server.close());

    for (const framework of frameworks) {
      it(`${framework.name}: RateLimit headers on each allowed request, then 429 RATE_LIMITED with Retry-After`, async () => {
        const { store, close } = await server.fresh();
        const app = await framework.serve(new RateLimiter(store, { name: "payments", limit: 3, windowMs: 60_000 }));
        try {
          const allowed = [await app.send("u_1"), await app.send("u_1"), await app.send("u_1")];
          expect(allowed.map((r) => r.status)).toEqual([201, 201, 201]);
          expect(allowed.map((r) => r.headers.ratelimit)).toEqual([
            '"payments";r=2;t=20',
            '"payments";r=1;t=20',
            '"payments";r=0;t=20',
          ]);
          expect(allowed[0]?.headers["ratelimit-policy"]).toBe('"payments";q=3;w=60');
          expect(allowed[0]?.headers["retry-after"]).toBeUndefined();

          const refused = await app.send("u_1");
          expect(refused.status).toBe(429);
          expect(refused.headers["content-type"]).toMatch(/^application\/json/);
          expect(refused.headers["retry-after"]).toBe("20");
          expect(refused.headers["ratelimit-policy"]).toBe('"payments";q=3;w=60');
          // The effective window of draft -11: no more than r=0 until Retry-After.
          expect(refused.headers.ratelimit).toBe('"payments";r=0;t=20');
          expect(refused.body).toEqual({ error: { code: "RATE_LIMITED", message: "Too many requests: retry later." } });

          expect((await app.send("u_2")).status).toBe(201);
        } finally {
          await app.close();
          await close();
        }
      });
    }
  });
}

describe("a store that is down", () => {
  for (const framework of frameworks) {
    it(`${framework.name}: the insurance limiter decides by default (its headers, then 429)`, async () => {
      const app = await framework.serve(new RateLimiter(down, { name: "payments", limit: 1, windowMs: 60_000 }));
      try {
        const replies = [await app.send("u_1"), await app.send("u_1")];
        expect(replies.map((r) => r.status)).toEqual([201, 429]);
        expect(replies[0]?.headers.ratelimit).toBe('"payments";r=0;t=60');
        expect(replies[1]?.headers["retry-after"]).toBe("60");
      } finally {
        await app.close();
      }
    });

    it(`${framework.name}: fails open when configured (the route runs, no RateLimit headers)`, async () => {
      const app = await framework.serve(new RateLimiter(down, { limit: 1, windowMs: 60_000, onStoreError: "allow" }));
      try {
        const replies = [await app.send("u_1"), await app.send("u_1")];
        expect(replies.map((r) => r.status)).toEqual([201, 201]);
        expect(replies[0]?.headers.ratelimit).toBeUndefined();
      } finally {
        await app.close();
      }
    });

    it(`${framework.name}: fails closed when configured: 503 RATE_LIMITER_UNAVAILABLE with Retry-After`, async () => {
      const app = await framework.serve(new RateLimiter(down, { limit: 1, windowMs: 60_000, onStoreError: "deny" }));
      try {
        const reply = await app.send("u_1");
        expect(reply.status).toBe(503);
        expect(reply.headers["retry-after"]).toBe("1");
        expect(reply.body).toMatchObject({ error: { code: "RATE_LIMITER_UNAVAILABLE" } });
      } finally {
        await app.close();
      }
    });
  }
});
