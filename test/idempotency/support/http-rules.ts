// The HTTP rules that do not depend on the store: keys, status mapping, production safety, context, errors.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPayload } from "@/blocks/idempotency/fingerprint";
import { requestFingerprint } from "@/blocks/idempotency/http/request-fingerprint";
import { ANONYMOUS_USER_ID } from "@/blocks/idempotency/http/user-id";
import { recordingLogger } from "@/blocks/idempotency/testing/recorders";
import type { IdempotencyCache, IdempotencyStore } from "@/blocks/idempotency/types";
import { RouteError, type HttpDriver, type Style } from "./http-driver";
import { created, errorCode, type Harness } from "./http-harness";

/** The HTTP rules, checked once per style on a MemoryStore. */
export function rulesSuite(t: Harness, style: Style, driver: HttpDriver): void {
  const user = "u_1";

  it("answers 503 STORE_UNAVAILABLE when the store is down, without running the route", async () => {
    const down = () => Promise.reject(new Error("connection refused"));
    const store = new Proxy({} as IdempotencyStore, { get: () => down });
    const route = t.route(created);
    const { app } = await t.start(route, { store });
    const response = await app.request({ key: randomUUID(), user });
    expect(response.status).toBe(503);
    expect(errorCode(response)).toBe("STORE_UNAVAILABLE");
    expect(route.runs).toBe(0);
  });

  it.each([
    ["empty", ""],
    ["with a space", "a b"],
    ["non-ASCII", "clé"],
    ["256 characters", "k".repeat(256)],
    ["repeated (joined with a comma)", "key-1, key-2"],
    ["an unterminated quote", '"key-1'],
    ["an empty quoted string", '""'],
  ])("rejects a key that is %s with 400 IDEMPOTENCY_KEY_INVALID", async (_, key) => {
    const route = t.route(created);
    const { app } = await t.start(route);
    const response = await app.request({ key, user });
    expect(response.status).toBe(400);
    expect(errorCode(response)).toBe("IDEMPOTENCY_KEY_INVALID");
    expect(route.runs).toBe(0);
  });

  it("takes a quoted key (RFC 8941) as the same key as its bare form", async () => {
    const route = t.route(created);
    const { app } = await t.start(route);
    const key = randomUUID();
    await app.request({ key: `"${key}"`, user });
    const replay = await app.request({ key, user });
    expect(replay.status).toBe(201);
    expect(replay.context?.key).toBe(key);
    expect(route.runs).toBe(1);
  });

  it("accepts a 255-character key", async () => {
    const { app } = await t.start(t.route(created));
    expect((await app.request({ key: "k".repeat(255), user })).status).toBe(201);
  });

  it("answers a missing key 400 IDEMPOTENCY_KEY_MISSING when the route requires one", async () => {
    const route = t.route(created, { options: { requireKey: true } });
    const { app } = await t.start(route);
    const response = await app.request({ user });
    expect(response.status).toBe(400);
    expect(errorCode(response)).toBe("IDEMPOTENCY_KEY_MISSING");
    expect(route.runs).toBe(0);
  });

  it("runs the route unprotected when the key is missing and not required", async () => {
    const route = t.route(created);
    const { app } = await t.start(route);
    expect((await app.request({ user })).status).toBe(201);
    const second = await app.request({ user });
    expect(second.json()).toMatchObject({ id: "pay_2" });
    expect(second.context?.outcome).toBe("skipped");
  });

  it("applies the route's statusMap: REQUEST_IN_PROGRESS as 425", async () => {
    const { duplicate } = await t.duplicateWhileRunning(user, { statusMap: { REQUEST_IN_PROGRESS: 425 } });
    expect(duplicate.status).toBe(425);
    expect(errorCode(duplicate)).toBe("REQUEST_IN_PROGRESS");
    expect(duplicate.headers.get("retry-after")).toBe("1");
  });

  describe("in production", () => {
    const before = process.env.NODE_ENV;
    beforeAll(() => void (process.env.NODE_ENV = "production"));
    afterAll(() => void (process.env.NODE_ENV = before));

    it("refuses a route without getUserId", async () => {
      await expect(t.start(t.route(created, { defaultUserId: true }))).rejects.toThrow(/getUserId/);
    });

    if (t.driver.frameworkUser === false) {
      it("refuses a route without getUserId even with allowAnonymous: there is no framework user to fall back on", async () => {
        await expect(
          t.start(t.route(created, { defaultUserId: true, options: { allowAnonymous: true } })),
        ).rejects.toThrow(/getUserId/);
      });
    } else {
      it("accepts it with allowAnonymous, reading the framework's user", async () => {
        const { app } = await t.start(t.route(created, { defaultUserId: true, options: { allowAnonymous: true } }));
        expect((await app.request({ key: randomUUID(), user: "u_7" })).context?.userId).toBe("u_7");
        expect((await app.request({ key: randomUUID() })).context?.userId).toBe(ANONYMOUS_USER_ID);
      });
    }
  });

  it("sets the context on every outcome", async () => {
    const failing = t.route(
      () => {
        throw new RouteError(503, "bank timeout");
      },
      { path: "/refunds" },
    );
    const { app } = await t.start([t.route(created), failing]);
    const key = randomUUID();
    const body = { amount: 100, currency: "EUR" };
    const outcomes = [
      await app.request({ user, body }),
      await app.request({ key, user, body }),
      await app.request({ key, user, body }),
      await app.request({ key, user, body: { amount: 5 } }),
      await app.request({ key: "not valid", user, body }),
      await app.request({ key, user, body, path: "/refunds" }),
    ].map((response) => response.context);
    const scope = { userId: user, operation: "POST /payments" };
    const requestHash = hashPayload(requestFingerprint("POST", "/payments", body));
    expect(outcomes).toEqual([
      { ...scope, key: undefined, requestHash: undefined, outcome: "skipped" },
      { ...scope, key, requestHash, outcome: "executed" },
      { ...scope, key, requestHash, outcome: "replayed" },
      {
        ...scope,
        key,
        requestHash: hashPayload(requestFingerprint("POST", "/payments", { amount: 5 })),
        outcome: "rejected",
      },
      { ...scope, key: undefined, requestHash: undefined, outcome: "rejected" },
      {
        ...scope,
        operation: "POST /refunds",
        key,
        requestHash: hashPayload(requestFingerprint("POST", "/refunds", body)),
        outcome: "failed",
      },
    ]);
  });

  it("with errors: \"throw\", hands its own errors to the framework's error handler, the route's statusMap in `status`", async () => {
    const { first, duplicate } = await t.duplicateWhileRunning(user, {
      errors: "throw",
      statusMap: { REQUEST_IN_PROGRESS: 425 },
    });
    expect(first.status).toBe(201);
    expect(duplicate.status).toBe(425);
    expect(duplicate.json()).toEqual({ frameworkError: expect.stringMatching(/still being processed/) });
    const missing = await t.start(t.route(created, { options: { errors: "throw", requireKey: true } }));
    expect((await missing.app.request({ user })).json()).toEqual({
      frameworkError: expect.stringMatching(/Idempotency-Key/),
    });
  });

  it("passes other errors to the framework's error handler", async () => {
    const { app } = await t.start(t.route(() => Promise.reject(new Error("ledger exploded"))));
    const response = await app.request({ key: randomUUID(), user });
    expect(response.status).toBe(500);
    expect(response.json()).toEqual({ frameworkError: "ledger exploded" });
  });

  it("answers a malformed JSON body with a 4xx, without running the route", async () => {
    const route = t.route(created);
    const { app } = await t.start(route);
    const response = await app.request({ key: randomUUID(), user, rawJson: '{"amount": 1' });
    expect(response.status).toBe(400);
    expect(route.runs).toBe(0);
  });

  // Only capture style can meet a stream: a wrapper-style route returns a body.
  if (style === "capture")
    it("frees the key, recording nothing and spending no retry, when the route streams its response", async () => {
      const route = t.route(() => ({
        status: 200,
        stream: ["chunk 1, ", "chunk 2"],
        headers: { "content-type": "text/plain" },
      }));
      const { app } = await t.start(route);
      const key = randomUUID();
      const first = await app.request({ key, user });
      expect(first.body.toString()).toBe("chunk 1, chunk 2");
      expect(first.context?.outcome).toBe("uncaptured");
      // More tries than the retry budget (3): a streamed answer is not a failure, so the key is never poisoned.
      for (let retry = 0; retry < 4; retry++)
        expect((await app.request({ key, user })).body.toString()).toBe("chunk 1, chunk 2");
      expect(route.runs).toBe(5);
    });

  describe("issue 12: what identifies a request, and what a replay says", () => {
    const withdraw = (run: number) => ({ status: 201, body: { withdrawal: `w_${run}` } });

    it("point 1: answers one key sent to /accounts/A then /accounts/B 409, never A's replay", async () => {
      const route = t.route(withdraw, { path: "/accounts/:id/withdrawals" });
      const { app } = await t.start(route);
      const key = randomUUID();
      expect((await app.request({ key, user, path: "/accounts/A/withdrawals" })).status).toBe(201);
      const other = await app.request({ key, user, path: "/accounts/B/withdrawals" });
      expect([other.status, errorCode(other)]).toEqual([409, "KEY_REUSED_WITH_DIFFERENT_REQUEST"]);
      expect((await app.request({ key, user, path: "/accounts/A/withdrawals" })).json()).toEqual({ withdrawal: "w_1" });
      expect(route.runs).toBe(1);
    });

    it("point 1: answers one key sent to DELETE /items/1 then /items/2 409", async () => {
      const route = t.route(() => ({ status: 200, body: { deleted: true } }), { path: "/items/:id", method: "DELETE" });
      const { app } = await t.start(route);
      const key = randomUUID();
      expect((await app.request({ key, user, method: "DELETE", path: "/items/1" })).status).toBe(200);
      expect(errorCode(await app.request({ key, user, method: "DELETE", path: "/items/2" }))).toBe(
        "KEY_REUSED_WITH_DIFFERENT_REQUEST",
      );
      expect(route.runs).toBe(1);
    });

    it("point 1: answers one key sent with ?to=alice then ?to=bob 409, and replays the same query in any parameter order", async () => {
      const route = t.route(created, { path: "/transfers" });
      const { app } = await t.start(route);
      const key = randomUUID();
      expect((await app.request({ key, user, path: "/transfers?to=alice&amount=5" })).status).toBe(201);
      expect(errorCode(await app.request({ key, user, path: "/transfers?to=bob&amount=5" }))).toBe(
        "KEY_REUSED_WITH_DIFFERENT_REQUEST",
      );
      const reordered = await app.request({ key, user, path: "/transfers?amount=5&to=alice" });
      expect([reordered.status, reordered.context?.outcome]).toEqual([201, "replayed"]);
      expect(route.runs).toBe(1);
    });

    it("point 1: lets getFingerprint replace the whole fingerprint input", async () => {
      const route = t.route(withdraw, {
        path: "/accounts/:id/withdrawals",
        options: { getFingerprint: () => "one withdrawal whatever the account" },
      });
      const { app } = await t.start(route);
      const key = randomUUID();
      await app.request({ key, user, path: "/accounts/A/withdrawals", body: { amount: 1 } });
      const replay = await app.request({ key, user, path: "/accounts/B/withdrawals", body: { amount: 2 } });
      expect([replay.status, replay.context?.outcome]).toEqual([201, "replayed"]);
      expect(route.runs).toBe(1);
    });

    it("point 2: names the operation after the route's template, never a concrete path segment", async () => {
      const route = t.route(withdraw, { path: "/accounts/:id/withdrawals" });
      const { app } = await t.start(route);
      // Long, but under Fastify's own limit on a path parameter (100 characters, then 414).
      const long = "x".repeat(90);
      for (const path of ["/accounts/A/withdrawals", `/accounts/${long}/withdrawals`]) {
        const response = await app.request({ key: randomUUID(), user, path });
        expect([response.status, response.context?.operation]).toEqual([201, "POST /accounts/:id/withdrawals"]);
      }
    });

    it("point 14: marks every replay with Idempotent-Replayed: true, and never a first response", async () => {
      const { app } = await t.start(t.route(created));
      const key = randomUUID();
      const first = await app.request({ key, user });
      const replay = await app.request({ key, user });
      expect(first.headers.get("idempotent-replayed")).toBeNull();
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body.equals(first.body)).toBe(true);
    });

    it("point 14: renames the replay marker, or drops it, with replayedHeader", async () => {
      const renamed = t.route(created, { path: "/renamed", options: { replayedHeader: "X-Replayed" } });
      const dropped = t.route(created, { path: "/dropped", options: { replayedHeader: false } });
      const { app } = await t.start([renamed, dropped]);
      const key = randomUUID();
      await app.request({ key, user, path: "/renamed" });
      const replay = await app.request({ key, user, path: "/renamed" });
      expect([replay.headers.get("x-replayed"), replay.headers.get("idempotent-replayed")]).toEqual(["true", null]);
      await app.request({ key, user, path: "/dropped" });
      const unmarked = await app.request({ key, user, path: "/dropped" });
      expect([unmarked.context?.outcome, unmarked.headers.get("idempotent-replayed")]).toEqual(["replayed", null]);
    });

    it("point 9: a replay from the cache gets the allow-list and the marker too: a cached Set-Cookie never goes out", async () => {
      const cached: { record?: unknown } = {};
      const cache: IdempotencyCache = { get: async () => cached.record, set: async () => {} };
      const { app } = await t.start(t.route(created), { cache });
      const key = randomUUID();
      const first = await app.request({ key, user });
      // What only the cache holds (another version or app wrote it): a cookie, and a Location the store never saw.
      const stored = {
        status: 201,
        headers: { "set-cookie": ["session=stolen"], location: "/from-cache" },
        body: first.body.toString(),
        encoding: "utf8",
      };
      cached.record = { requestHash: first.context?.requestHash, status: "SUCCESS", response: JSON.stringify(stored) };
      const replay = await app.request({ key, user });
      expect(replay.headers.get("set-cookie")).toBeNull();
      expect([replay.headers.get("location"), replay.headers.get("idempotent-replayed")]).toEqual([
        "/from-cache",
        "true",
      ]);
      expect(replay.body.equals(first.body)).toBe(true);
    });

    it("point 13: a failed key keeps its status: retries get 409 REQUEST_FAILED naming the original 402", async () => {
      const route = t.route(() => ({ status: 402, body: { error: "card_declined" } }));
      const { app } = await t.start(route);
      const key = randomUUID();
      expect((await app.request({ key, user })).status).toBe(402);
      const retry = await app.request({ key, user });
      expect(retry.status).toBe(409);
      expect(retry.json()).toMatchObject({ error: { code: "REQUEST_FAILED", originalStatus: 402 } });
      expect(route.runs).toBe(1);
    });

    it("point 13: replays the failed response itself, byte for byte, with replayFailures", async () => {
      const route = t.route(() => ({ status: 422, body: { error: "amount_too_large", zebra: 1, apple: 2 } }), {
        options: { replayFailures: true },
      });
      const { app } = await t.start(route);
      const key = randomUUID();
      const failed = await app.request({ key, user });
      const replay = await app.request({ key, user });
      expect([failed.status, replay.status]).toEqual([422, 422]);
      expect(replay.body.equals(failed.body)).toBe(true);
      expect(replay.headers.get("content-type")).toBe(failed.headers.get("content-type"));
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(route.runs).toBe(1);
    });

    it("point 17: treats a status below 400 as success: a 303 is recorded and replayed", async () => {
      const route = t.route((run) => ({ status: 303, body: "", headers: { location: `/orders/o_${run}` } }));
      const { app } = await t.start(route);
      const key = randomUUID();
      await app.request({ key, user });
      const replay = await app.request({ key, user });
      expect([replay.status, replay.headers.get("location"), replay.context?.outcome]).toEqual([
        303,
        "/orders/o_1",
        "replayed",
      ]);
      expect(route.runs).toBe(1);
    });

    // Express's capture middleware never sees the error (Express hands it to the error handlers after the route).
    if (style === "wrapper" || driver.captureSeesThrownErrors) {
      it("point 17: takes isPermanentError in both styles: a thrown permanent error fails the key whatever status it was answered with", async () => {
        const route = t.route(() => {
          throw new RouteError(503, "card declined", true);
        });
        const { app } = await t.start(route);
        const key = randomUUID();
        expect((await app.request({ key, user })).status).toBe(503);
        expect(errorCode(await app.request({ key, user }))).toBe("REQUEST_FAILED");
        expect(route.runs).toBe(1);
      });
    }

    it("point 16: logs a failed response's body as text, never a byte array, and no stack above debug", async () => {
      const logger = recordingLogger();
      const { app } = await t.start(
        t.route(() => ({ status: 402, body: { error: "card_declined" } })),
        { handler: { logger } },
      );
      await app.request({ key: randomUUID(), user });
      const failure = logger.lines.find((line) => line.msg === "idempotency: permanent failure, key marked FAILED");
      expect(failure?.err).toEqual({
        name: "ErrorResponse",
        message: 'The route answered 402: {"error":"card_declined"}',
      });
      const aboveDebug = JSON.stringify(logger.lines.filter((line) => line.level !== "debug"));
      expect(aboveDebug).not.toContain('"type":"Buffer"');
      expect(aboveDebug).not.toContain("stack");
    });

    // A route without `getUserId` reads the framework's user; fetch has none (its driver covers both points itself).
    if (driver.frameworkUser !== false) {
      it("point 4: answers a request with credentials but no readable user 500, never the anonymous scope, and runs nothing", async () => {
        const route = t.route(created, { defaultUserId: true, options: { allowAnonymous: true } });
        const { app } = await t.start(route);
        const response = await app.request({
          key: randomUUID(),
          headers: { authorization: "Bearer eyJhbGciOi.alice" },
        });
        expect(response.status).toBe(500);
        expect(response.json()).toEqual({ frameworkError: expect.stringContaining("getUserId") });
        expect(route.runs).toBe(0);
      });

      it('point 6: keeps the anonymous scope apart from a real user whose id is "anonymous"', async () => {
        const route = t.route(created, { defaultUserId: true, options: { allowAnonymous: true } });
        const { app } = await t.start(route);
        const key = randomUUID();
        const nobody = await app.request({ key });
        const named = await app.request({ key, user: "anonymous" });
        expect([nobody.context?.userId, named.context?.userId]).toEqual([ANONYMOUS_USER_ID, "anonymous"]);
        expect(named.context?.outcome).toBe("executed");
        expect(route.runs).toBe(2);
      });
    }
  });
}
