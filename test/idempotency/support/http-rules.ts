// The HTTP rules that do not depend on the store: keys, status mapping, production safety, context, errors.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPayload } from "@/blocks/idempotency/fingerprint";
import type { IdempotencyStore } from "@/blocks/idempotency/types";
import { RouteError, type Style } from "./http-driver";
import { created, deferred, errorCode, type Harness } from "./http-harness";

/** The HTTP rules, checked once per style on a MemoryStore. */
export function rulesSuite(t: Harness, style: Style): void {
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
    const entered = deferred();
    const finish = deferred();
    const route = t.route(
      async (run) => {
        entered.resolve();
        await finish.promise;
        return created(run);
      },
      { options: { statusMap: { REQUEST_IN_PROGRESS: 425 } } },
    );
    const { app } = await t.start(route);
    const key = randomUUID();
    const first = app.request({ key, user });
    await entered.promise;
    const duplicate = await app.request({ key, user });
    finish.resolve();
    await first;
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
        await expect(t.start(t.route(created, { defaultUserId: true, options: { allowAnonymous: true } }))).rejects.toThrow(/getUserId/);
      });
    } else {
      it("accepts it with allowAnonymous, reading the framework's user", async () => {
        const { app } = await t.start(t.route(created, { defaultUserId: true, options: { allowAnonymous: true } }));
        expect((await app.request({ key: randomUUID(), user: "u_7" })).context?.userId).toBe("u_7");
        expect((await app.request({ key: randomUUID() })).context?.userId).toBe("anonymous");
      });
    }
  });

  it("sets the context on every outcome", async () => {
    const failing = t.route(() => {
      throw new RouteError(503, "bank timeout");
    }, { path: "/refunds" });
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
    const requestHash = hashPayload(body);
    expect(outcomes).toEqual([
      { ...scope, key: undefined, requestHash: undefined, outcome: "skipped" },
      { ...scope, key, requestHash, outcome: "executed" },
      { ...scope, key, requestHash, outcome: "replayed" },
      { ...scope, key, requestHash: hashPayload({ amount: 5 }), outcome: "rejected" },
      { ...scope, key: undefined, requestHash: undefined, outcome: "rejected" },
      { ...scope, operation: "POST /refunds", key, requestHash, outcome: "failed" },
    ]);
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
  if (style === "capture") it("frees the key, recording nothing and spending no retry, when the route streams its response", async () => {
    const route = t.route(() => ({ status: 200, stream: ["chunk 1, ", "chunk 2"], headers: { "content-type": "text/plain" } }));
    const { app } = await t.start(route);
    const key = randomUUID();
    const first = await app.request({ key, user });
    expect(first.body.toString()).toBe("chunk 1, chunk 2");
    expect(first.context?.outcome).toBe("uncaptured");
    // More tries than the retry budget (3): a streamed answer is not a failure, so the key is never poisoned.
    for (let retry = 0; retry < 4; retry++) expect((await app.request({ key, user })).body.toString()).toBe("chunk 1, chunk 2");
    expect(route.runs).toBe(5);
  });
}
