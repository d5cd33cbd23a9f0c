// What the conformance tests share: store fixtures with a controllable clock, an app starter, routes and deferreds.
import { randomUUID } from "node:crypto";
import { afterEach } from "vitest";
import { IdempotencyHandler, type IdempotencyHandlerOptions } from "@/blocks/idempotency/handler";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import type { IdempotencyCache, IdempotencyStore } from "@/blocks/idempotency/types";
import { watchedStore, type WatchedStore } from "./watched-store";
import {
  type HttpDriver,
  type RouteReply,
  type Style,
  type TestApp,
  type TestResponse,
  type TestRoute,
} from "./http-driver";

/** A store for one test, and a way to move its clock forward. */
export type StoreFixture = { store: IdempotencyStore; advance(ms: number): Promise<void> };

/** A fresh MemoryStore on a fake clock: time moves only when a test says so. */
export function memoryFixture(): StoreFixture {
  let now = Date.now();
  const store = new MemoryStore({ now: () => now });
  return { store, advance: async (ms) => void (now += ms) };
}

export type Harness = ReturnType<typeof harness>;

export type StartOptions = {
  handler?: IdempotencyHandlerOptions | undefined;
  store?: IdempotencyStore;
  cache?: IdempotencyCache;
  /** Sees the store through a wrapper (e.g. `watchedStore`), whichever store the test uses. */
  wrapStore?: (store: IdempotencyStore) => IdempotencyStore;
};

/** Starts apps for the tests of one style and closes them after each test. */
export function harness(driver: HttpDriver, style: Style, openStore: () => StoreFixture) {
  const apps: TestApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });
  const t = {
    style,
    driver,
    fixture: undefined as unknown as StoreFixture,
    /** A POST /payments route (unless `extra.path` says otherwise) whose logic counts its runs and answers `respond(run)`. */
    route(respond: (run: number) => RouteReply | Promise<RouteReply>, extra: Partial<TestRoute> = {}) {
      const route: TestRoute & { runs: number } = {
        path: "/payments",
        runs: 0,
        ...extra,
        options: extra.options ?? {},
        logic: () => respond(++route.runs),
      };
      return route;
    },
    async start(routes: TestRoute | TestRoute[], options: StartOptions = {}) {
      t.fixture = openStore();
      const store = options.store ?? t.fixture.store;
      const handler = new IdempotencyHandler(
        options.wrapStore ? options.wrapStore(store) : store,
        options.cache,
        options.handler,
      );
      const app = await driver.start({ handler, style, routes: [routes].flat() });
      apps.push(app);
      return { app, handler };
    },
    /**
     * Sends a request with one key, then a duplicate while the first is still inside the route's
     * logic; the first finishes after the duplicate's answer. `options`: the route's options.
     */
    async duplicateWhileRunning(user: string, options: TestRoute["options"] = {}, handler?: IdempotencyHandlerOptions) {
      const entered = deferred();
      const finish = deferred();
      const route = t.route(
        async (run) => {
          entered.resolve();
          await finish.promise;
          return created(run);
        },
        { options },
      );
      const { app } = await t.start(route, { handler });
      const key = randomUUID();
      const first = app.request({ key, user });
      await entered.promise;
      const duplicate = await app.request({ key, user });
      finish.resolve();
      return { route, duplicate, first: await first };
    },
    /**
     * Like `duplicateWhileRunning`, for a duplicate that waits (`waitMs`): the first attempt ends
     * with `respond(1)` once the duplicate has polled the store.
     */
    async duplicateWaiting(
      user: string,
      setup: {
        route?: TestRoute["options"];
        handler?: IdempotencyHandlerOptions;
        respond?: (run: number) => RouteReply;
      },
    ) {
      const entered = deferred();
      const finish = deferred();
      const respond = setup.respond ?? created;
      const route = t.route(
        async (run) => {
          if (run > 1) return respond(run);
          entered.resolve();
          await finish.promise;
          return respond(run);
        },
        { options: setup.route ?? {} },
      );
      let watched: WatchedStore | undefined;
      const { app } = await t.start(route, {
        handler: setup.handler,
        wrapStore: (store) => (watched = watchedStore(store)).store,
      });
      const key = randomUUID();
      const first = app.request({ key, user });
      await entered.promise;
      const duplicate = app.request({ key, user });
      await watched!.getsReached(1);
      finish.resolve();
      return { route, first: await first, duplicate: await duplicate };
    },
  };
  return t;
}

/** A payment route's answer for its `run`-th execution. */
export const created = (run: number): RouteReply => ({
  status: 201,
  // Keys deliberately unsorted: a replay that re-serialized parsed JSON (or read it from JSONB) would reorder them.
  body: { zebra: run, id: `pay_${run}`, amount: 100 },
  headers: { location: `/payments/pay_${run}` },
});

/** A promise the test settles: it holds a route inside its logic, with no sleep. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((ok) => (resolve = ok));
  return { promise, resolve };
}

export function errorCode(response: TestResponse): unknown {
  return (response.json() as { error?: { code?: unknown } }).error?.code;
}
