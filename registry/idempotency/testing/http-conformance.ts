// One HTTP suite for every adapter: a framework's test file gives a small driver, this file the behaviour.
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { RedisCache } from "../caches/redis-cache";
import { hashPayload } from "../fingerprint";
import { IdempotencyHandler, type IdempotencyHandlerOptions } from "../handler";
import type { IdempotencyContext } from "../http/context";
import type { RouteResult } from "../http/http-response";
import type { WrapperRouteOptions } from "../http/route-options";
import { MemoryStore } from "../stores/memory-store";
import { PostgresStore } from "../stores/postgres-store";
import type { IdempotencyCache, IdempotencyStore } from "../types";
import { dropTables, openTestDatabase, openTestRedis, redisUrl, testDatabaseNames, uniqueTableName, type TestDatabase } from "./services";

export type Style = "wrapper" | "capture";

/** What a test route answers. An object body goes out as JSON, a string as text; `stream` pipes chunks instead. */
export type RouteReply = { status?: number; body?: unknown; headers?: Record<string, string>; stream?: string[] };

/** Route options every framework takes as they are (the driver adds `getUserId`). */
export type NeutralRouteOptions = Omit<WrapperRouteOptions<unknown>, "getUserId" | "getOperation" | "getBody">;

export type TestRoute = {
  path: string;
  /** The route's logic, with its side effect: it is what must run exactly once. */
  logic: () => Promise<RouteReply> | RouteReply;
  options: NeutralRouteOptions;
  /** Leave `getUserId` out, so the adapter's default (the framework's user) applies. */
  defaultUserId?: boolean;
};

/**
 * Builds an app for one test: an auth step that sets the framework's user (`req.user`,
 * `request.user`, `c.set("user")`) to `{ id: <x-user-id header> }`, one POST route per `TestRoute`
 * in the given style, and an error handler answering `err.status ?? err.statusCode ?? 500` with
 * `{ frameworkError: err.message }`. Rejects when the adapter refuses the routes.
 */
export type HttpDriver = {
  start(setup: { handler: IdempotencyHandler; style: Style; routes: TestRoute[] }): Promise<TestApp>;
};

export type TestApp = {
  request(request: TestRequest): Promise<TestResponse>;
  close(): Promise<void>;
};

export type TestRequest = { path?: string; key?: string; user?: string; body?: unknown; rawJson?: string };

export type TestResponse = {
  status: number;
  headers: Headers;
  body: Buffer;
  /** The request's `IdempotencyContext` as the app saw it, read after the response. */
  context: IdempotencyContext | undefined;
  json(): unknown;
};

/** The fetch-style request a driver sends for a `TestRequest`; `testId` lets the app report the request's context. */
export function toFetchRequest(request: TestRequest): { path: string; testId: string; init: { method: string; headers: Record<string, string>; body: string } } {
  const testId = randomUUID();
  const headers: Record<string, string> = { "content-type": "application/json", "x-test-id": testId };
  if (request.key !== undefined) headers["idempotency-key"] = request.key;
  if (request.user !== undefined) headers["x-user-id"] = request.user;
  const body = request.rawJson ?? JSON.stringify(request.body ?? { amount: 100, currency: "EUR" });
  return { path: request.path ?? "/payments", testId, init: { method: "POST", headers, body } };
}

export function testResponse(status: number, headers: Headers, body: Buffer, context: IdempotencyContext | undefined): TestResponse {
  return { status, headers, body, context, json: () => JSON.parse(body.toString("utf8")) };
}

/** A wrapper-style route returns what a capture-style route sends. */
export function routeResult(reply: RouteReply): RouteResult {
  if (reply.stream) throw new Error("A wrapper-style route returns a body; it cannot stream.");
  return { status: reply.status, body: reply.body, headers: reply.headers };
}

/** An error the logic throws; `permanent` is what the routes' `isPermanentError` checks. */
export class RouteError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly permanent = false,
  ) {
    super(message);
  }
}

const isPermanentError = (err: unknown) => err instanceof RouteError && err.permanent;

type StoreFixture = { store: IdempotencyStore; advance(ms: number): Promise<void> };
type StoreKind = "memory" | TestDatabase["name"];

/** Runs the whole suite for one framework: each style, against memory and PostgreSQL (PGlite, and DATABASE_URL when set). */
export function runHttpConformance(driver: HttpDriver): void {
  const styles: Style[] = ["wrapper", "capture"];
  const stores: StoreKind[] = ["memory", ...testDatabaseNames()];

  describe.each(stores)("%s store", (kind) => {
    let open: () => StoreFixture;
    let close = async () => {};
    beforeAll(async () => {
      if (kind === "memory") {
        open = memoryFixture;
        return;
      }
      const db = await openTestDatabase(kind);
      const table = uniqueTableName("http");
      const store = new PostgresStore(db.client, { table });
      await store.createSchema();
      // PostgreSQL keeps its own clock: time passes for real, so tests that need it use tiny TTLs.
      open = () => ({ store, advance: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) });
      close = async () => {
        await dropTables(db.client, table);
        await db.close();
      };
    });
    afterAll(() => close());

    describe.each(styles)("%s style", (style) => {
      const t = harness(driver, style, () => open());
      storeSuite(t);
    });
  });

  describe.each(styles)("%s style, any store", (style) => {
    const t = harness(driver, style, memoryFixture);
    rulesSuite(t, style);
  });
}

function memoryFixture(): StoreFixture {
  let now = Date.now();
  const store = new MemoryStore({ now: () => now });
  return { store, advance: async (ms) => void (now += ms) };
}

type Harness = ReturnType<typeof harness>;

/** Starts apps for tests and closes them after each one. */
function harness(driver: HttpDriver, style: Style, openStore: () => StoreFixture) {
  const apps: TestApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });
  const t = {
    style,
    fixture: undefined as unknown as StoreFixture,
    /** A route at `path` whose logic counts its runs and answers `respond(run)`. */
    route(respond: (run: number) => RouteReply | Promise<RouteReply>, extra: Partial<TestRoute> = {}) {
      const route = {
        path: "/payments",
        runs: 0,
        ...extra,
        options: { isPermanentError, ...extra.options },
        logic: () => respond(++route.runs),
      };
      return route;
    },
    async start(routes: TestRoute | TestRoute[], options: { handler?: IdempotencyHandlerOptions; store?: IdempotencyStore; cache?: IdempotencyCache } = {}) {
      t.fixture = openStore();
      const handler = new IdempotencyHandler(options.store ?? t.fixture.store, options.cache, options.handler);
      const app = await driver.start({ handler, style, routes: [routes].flat() });
      apps.push(app);
      return { app, handler };
    },
  };
  return t;
}

const created = (run: number): RouteReply => ({
  status: 201,
  // Keys deliberately unsorted: a replay that re-serialized parsed JSON (or read it from JSONB) would reorder them.
  body: { zebra: run, id: `pay_${run}`, amount: 100 },
  headers: { location: `/payments/pay_${run}` },
});

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((ok) => (resolve = ok));
  return { promise, resolve };
}

function errorCode(response: TestResponse): unknown {
  return (response.json() as { error?: { code?: unknown } }).error?.code;
}

/** The checklist of idempotency-in-production.md, for each store. */
function storeSuite(t: Harness): void {
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
    const entered = deferred();
    const finish = deferred();
    const route = t.route(async (run) => {
      entered.resolve();
      await finish.promise;
      return created(run);
    });
    const { app } = await t.start(route);
    const key = randomUUID();
    const first = app.request({ key, user });
    await entered.promise;
    const duplicate = await app.request({ key, user });
    finish.resolve();
    expect(duplicate.status).toBe(409);
    expect(errorCode(duplicate)).toBe("REQUEST_IN_PROGRESS");
    expect(duplicate.headers.get("retry-after")).toBe("1");
    expect((await first).status).toBe(201);
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
    const { app, handler } = await t.start(route);
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

  it("cleanup frees an expired key", async () => {
    const route = t.route(created);
    const { app, handler } = await t.start(route, { handler: { ttlMs: 20 } });
    const key = randomUUID();
    await app.request({ key, user });
    await t.fixture.advance(25);
    expect((await handler.cleanupExpiredRecords()).deleted).toBeGreaterThanOrEqual(1);
    expect((await app.request({ key, user })).json()).toMatchObject({ id: "pay_2" });
    expect(route.runs).toBe(2);
  });

  it("replays only the allow-listed headers: never Set-Cookie", async () => {
    const route = t.route(() => ({
      status: 201,
      body: { id: "pay_1" },
      headers: { "set-cookie": "session=secret", location: "/payments/pay_1", "x-ledger-entry": "le_1", "x-debug": "1" },
    }), { options: { replayHeaders: ["X-Ledger-Entry"] } });
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
      expect(cacheHits).toHaveLength(1);
      expect(route.runs).toBe(1);
    });
  });
}

/** The HTTP rules that do not depend on the store. */
function rulesSuite(t: Harness, style: Style): void {
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

    it("accepts it with allowAnonymous, reading the framework's user", async () => {
      const { app } = await t.start(t.route(created, { defaultUserId: true, options: { allowAnonymous: true } }));
      expect((await app.request({ key: randomUUID(), user: "u_7" })).context?.userId).toBe("u_7");
      expect((await app.request({ key: randomUUID() })).context?.userId).toBe("anonymous");
    });
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
  if (style === "capture") it("frees the key, recording nothing, when the route streams its response", async () => {
    const route = t.route(() => ({ status: 200, stream: ["chunk 1, ", "chunk 2"], headers: { "content-type": "text/plain" } }));
    const { app } = await t.start(route);
    const key = randomUUID();
    const first = await app.request({ key, user });
    expect(first.body.toString()).toBe("chunk 1, chunk 2");
    expect(first.context?.outcome).toBe("uncaptured");
    expect((await app.request({ key, user })).body.toString()).toBe("chunk 1, chunk 2");
    expect(route.runs).toBe(2);
  });
}
