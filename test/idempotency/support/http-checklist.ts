// The production checklist over HTTP, for each store: replays, conflicts, concurrency, failures, maintenance.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisCache } from "@/blocks/idempotency/caches/redis-cache";
import { RouteError } from "./http-driver";
import { created, deferred, errorCode, type Harness } from "./http-harness";
import { openTestRedis, redisUrl, uniqueTableName } from "./services";
import type { StoreKind } from "./store-harness";

/** The checklist of idempotency-in-production.md ("Testing Checklist"), on the store `t` opens. */
export function checklistSuite(t: Harness, store: Pick<StoreKind, "expiresByItself">): void {
  const user = "u_1";

  it("replays a duplicate byte for byte, and the logic runs once", async () => {
    const route = t.route(created);
    const { app } = await t.start(route);
    const key = randomUUID();
    const first = await app.request({ key, user });
    const replay = await app.request({ key, user });
    expect(first.status).toBe(201);
    expect(first.body.toString()).toBe('{"zebra":1,"id":"pay_1","amount":100}');
    expect(replay.status).toBe(201);
    expect(replay.body.equals(first.body)).toBe(true);
    expect(replay.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(replay.headers.get("location")).toBe("/payments/pay_1");
    // In-process requests (Hono's app.request) carry no Content-Length; over a socket it must fit the body.
    expect(replay.headers.get("content-length") ?? String(replay.body.length)).toBe(String(first.body.length));
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(route.runs).toBe(1);
  });

  it("replays a text body byte for byte", async () => {
    const route = t.route(() => ({ status: 200, body: "accepted: café ✓\n" }));
    const { app } = await t.start(route);
    const key = randomUUID();
    const first = await app.request({ key, user });
    const replay = await app.request({ key, user });
    expect(first.body.toString()).toBe("accepted: café ✓\n");
    expect(replay.body.equals(first.body)).toBe(true);
    expect(replay.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(route.runs).toBe(1);
  });

  it("answers the same key with a different payload 409 KEY_REUSED_WITH_DIFFERENT_REQUEST", async () => {
    const route = t.route(created);
    const { app } = await t.start(route);
    const key = randomUUID();
    await app.request({ key, user, body: { amount: 100 } });
    const reused = await app.request({ key, user, body: { amount: 999 } });
    expect(reused.status).toBe(409);
    expect(errorCode(reused)).toBe("KEY_REUSED_WITH_DIFFERENT_REQUEST");
    expect(route.runs).toBe(1);
  });

  it("matches payloads whatever their key order", async () => {
    const route = t.route(created);
    const { app } = await t.start(route);
    const key = randomUUID();
    await app.request({ key, user, body: { amount: 100, currency: "EUR" } });
    const replay = await app.request({ key, user, rawJson: '{"currency":"EUR","amount":100}' });
    expect(replay.status).toBe(201);
    expect(route.runs).toBe(1);
  });

  it("answers a concurrent duplicate 409 REQUEST_IN_PROGRESS with Retry-After, and runs the logic once", async () => {
    const { route, first, duplicate } = await t.duplicateWhileRunning(user);
    expect(duplicate.status).toBe(409);
    expect(errorCode(duplicate)).toBe("REQUEST_IN_PROGRESS");
    expect(duplicate.headers.get("retry-after")).toBe("1");
    expect(first.status).toBe(201);
    expect(route.runs).toBe(1);
  });

  it("fails the key on a permanent failure: a retry gets 409 REQUEST_FAILED", async () => {
    const route = t.route(() => {
      throw new RouteError(422, "card declined", true);
    });
    const { app } = await t.start(route);
    const key = randomUUID();
    const failed = await app.request({ key, user });
    const retry = await app.request({ key, user });
    expect(failed.status).toBe(422);
    expect(retry.status).toBe(409);
    expect(errorCode(retry)).toBe("REQUEST_FAILED");
    expect(route.runs).toBe(1);
  });

  it("frees the key on a transient failure: the retry executes", async () => {
    const route = t.route((run) => {
      if (run === 1) throw new RouteError(503, "bank timeout");
      return created(run);
    });
    const { app } = await t.start(route);
    const key = randomUUID();
    expect((await app.request({ key, user })).status).toBe(503);
    const retry = await app.request({ key, user });
    expect(retry.status).toBe(201);
    expect(retry.json()).toMatchObject({ id: "pay_2" });
    expect(route.runs).toBe(2);
  });

  it.runIf(t.style === "wrapper")(
    "runs a route of two steps from its first incomplete step on a retry: the charge happens once",
    async () => {
      const charges: string[] = [];
      let receipts = 0;
      const route = t.route(() => created(0), {});
      route.logic = async (ctx) => {
        if (!ctx) throw new Error("wrapper style hands the route its context");
        const payment = await ctx.step("charge", (stepKey) => (charges.push(stepKey), { id: `pay_${charges.length}` }));
        await ctx.step("receipt", () => {
          if (++receipts === 1) throw new RouteError(503, "mailer unavailable", false);
        });
        return { status: 201, body: payment };
      };
      const { app } = await t.start(route);
      const key = randomUUID();
      expect((await app.request({ key, user })).status).toBe(503);
      const retry = await app.request({ key, user });
      expect(retry.status).toBe(201);
      expect(retry.json()).toEqual({ id: "pay_1" });
      expect(charges).toHaveLength(1);
      expect(receipts).toBe(2);
      expect((await app.request({ key, user })).json()).toEqual({ id: "pay_1" });
    },
  );

  it("poisons the key after three transient failures", async () => {
    const route = t.route(() => {
      throw new RouteError(503, "bank timeout");
    });
    const { app } = await t.start(route);
    const key = randomUUID();
    for (let attempt = 1; attempt <= 3; attempt++) expect((await app.request({ key, user })).status).toBe(503);
    const poisoned = await app.request({ key, user });
    expect(poisoned.status).toBe(409);
    expect(errorCode(poisoned)).toBe("REQUEST_FAILED");
    expect(route.runs).toBe(3);
  });

  it("never records an error response as a success", async () => {
    const route = t.route((run) => (run === 1 ? { status: 500, body: { error: "try again" } } : created(run)));
    const { app } = await t.start(route);
    const key = randomUUID();
    expect((await app.request({ key, user })).status).toBe(500);
    expect((await app.request({ key, user })).status).toBe(201);
    expect((await app.request({ key, user })).status).toBe(201);
    expect(route.runs).toBe(2);
  });

  it("never replays a 4xx response: the key is failed instead", async () => {
    const route = t.route(() => ({ status: 404, body: { error: "no such account" } }));
    const { app } = await t.start(route);
    const key = randomUUID();
    expect((await app.request({ key, user })).status).toBe(404);
    expect(errorCode(await app.request({ key, user }))).toBe("REQUEST_FAILED");
    expect(route.runs).toBe(1);
  });

  it("keeps working when the cache is down", async () => {
    const down = () => Promise.reject(new Error("cache down"));
    const route = t.route(created);
    const { app } = await t.start(route, { cache: { get: down, set: down } });
    const key = randomUUID();
    const first = await app.request({ key, user });
    const replay = await app.request({ key, user });
    expect(replay.status).toBe(201);
    expect(replay.body.equals(first.body)).toBe(true);
    expect(route.runs).toBe(1);
  });

  it("isolates keys per user and per operation", async () => {
    const payments = t.route(created);
    const refunds = t.route(created, { path: "/refunds" });
    const { app } = await t.start([payments, refunds]);
    const key = randomUUID();
    await app.request({ key, user: "u_1" });
    const otherUser = await app.request({ key, user: "u_2" });
    const otherOperation = await app.request({ key, user: "u_1", path: "/refunds" });
    expect(otherUser.status).toBe(201);
    expect(otherOperation.status).toBe(201);
    expect(payments.runs).toBe(2);
    expect(refunds.runs).toBe(1);
  });

  it("recovery frees the key of a crashed execution", async () => {
    const entered = deferred();
    const never = deferred();
    const route = t.route(async (run) => {
      if (run === 1) {
        entered.resolve();
        await never.promise; // a worker that froze mid-request
      }
      return created(run);
    });
    // No heartbeat: the handler refuses a recovery timeout shorter than its interval, and this one is 0.
    const { app, handler } = await t.start(route, { handler: { heartbeatIntervalMs: 0 } });
    const key = randomUUID();
    const crashed = app.request({ key, user });
    await entered.promise;
    expect((await app.request({ key, user })).status).toBe(409);
    await t.fixture.advance(1);
    expect((await handler.recoverStuckRecords({ timeoutInMs: 0 })).released).toBeGreaterThanOrEqual(1);
    const retry = await app.request({ key, user });
    expect(retry.status).toBe(201);
    expect(retry.json()).toMatchObject({ id: "pay_2" });
    never.resolve();
    await crashed;
  });

  // Redis and DynamoDB delete expired records themselves: cleanup has nothing to do, yet the key is free all the same.
  it(
    store.expiresByItself
      ? "frees an expired key by the store's own expiry; cleanup deletes nothing"
      : "cleanup frees an expired key",
    async () => {
      const route = t.route(created);
      const { app, handler } = await t.start(route, { handler: { ttlMs: 20 } });
      const key = randomUUID();
      await app.request({ key, user });
      await t.fixture.advance(25);
      const { deleted } = await handler.cleanupExpiredRecords();
      if (store.expiresByItself) expect(deleted).toBe(0);
      else expect(deleted).toBeGreaterThanOrEqual(1);
      expect((await app.request({ key, user })).json()).toMatchObject({ id: "pay_2" });
      expect(route.runs).toBe(2);
    },
  );

  it("replays only the allow-listed headers: never Set-Cookie", async () => {
    const route = t.route(
      () => ({
        status: 201,
        body: { id: "pay_1" },
        headers: {
          "set-cookie": "session=secret",
          location: "/payments/pay_1",
          "x-ledger-entry": "le_1",
          "x-debug": "1",
        },
      }),
      { options: { replayHeaders: ["X-Ledger-Entry"] } },
    );
    const { app } = await t.start(route);
    const key = randomUUID();
    const first = await app.request({ key, user });
    const replay = await app.request({ key, user });
    expect(first.headers.get("set-cookie")).toBe("session=secret");
    expect(replay.headers.get("set-cookie")).toBeNull();
    expect(replay.headers.get("x-debug")).toBeNull();
    expect(replay.headers.get("location")).toBe("/payments/pay_1");
    expect(replay.headers.get("x-ledger-entry")).toBe("le_1");
  });

  describe.skipIf(!redisUrl)("[REDIS_URL] with RedisCache", () => {
    let redis: Awaited<ReturnType<typeof openTestRedis>>;
    beforeAll(async () => void (redis = await openTestRedis()));
    afterAll(() => redis?.quit());

    it("[REDIS_URL] replays byte for byte from the cache", async () => {
      const cacheHits: string[] = [];
      const metrics = { increment: (id: string) => void (id === "cacheHits" && cacheHits.push(id)), observe() {} };
      const route = t.route(created);
      const cache = new RedisCache(redis, { prefix: `${uniqueTableName("test")}:` });
      const { app } = await t.start(route, { cache, handler: { metrics } });
      const key = randomUUID();
      const first = await app.request({ key, user });
      const replay = await app.request({ key, user });
      expect(replay.body.equals(first.body)).toBe(true);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(cacheHits).toHaveLength(1);
      expect(route.runs).toBe(1);
    });
  });
}
