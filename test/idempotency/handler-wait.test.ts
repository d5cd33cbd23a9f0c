// waitMs at the handler: a duplicate that finds its key running waits for the first attempt, on every kind of store.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { IdempotencyHandler, type ExecuteOptions, type IdempotencyHandlerOptions } from "@/blocks/idempotency/handler";
import { deferred, outcome } from "@/blocks/idempotency/testing/deferred";
import { recordingLogger, recordingMetrics } from "@/blocks/idempotency/testing/recorders";
import { redisUrl, SERVICE_START_TIMEOUT_MS, SUITE_TEST_TIMEOUT_MS } from "./support/services";
import { memoryStoreKind, postgresStoreKinds, type StoreHarness, type StoreKind } from "./support/store-harness";
import { redisStandaloneKind } from "./support/redis-store-harness";
import { maxPollsWithin, watchedStore, type WatchedStore } from "./support/watched-store";

class CardDeclined extends Error {}
class GatewayTimeout extends Error {}
const isPermanentError = (err: unknown) => err instanceof CardDeclined;

const kinds: StoreKind[] = [memoryStoreKind, ...postgresStoreKinds, ...(redisUrl ? [redisStandaloneKind] : [])];

describe.each(kinds)("waitMs on $name", { timeout: SUITE_TEST_TIMEOUT_MS }, (kind: StoreKind) => {
  let opened: Awaited<ReturnType<StoreKind["open"]>>;
  let harness: StoreHarness;
  let watched: WatchedStore;
  let n = 0;
  let key: string;
  const payments = (payload: unknown = { amount: 100 }) => ({
    operation: "payments:create",
    userId: "u_1",
    key,
    payload,
  });
  const newHandler = (options: IdempotencyHandlerOptions = {}) =>
    new IdempotencyHandler(watched.store, undefined, options);

  beforeAll(async () => void (opened = await kind.open()), SERVICE_START_TIMEOUT_MS);
  afterAll(async () => opened.close());
  beforeEach(async () => {
    harness = await opened.fresh();
    watched = watchedStore(harness.store);
    key = `wait-${++n}-${Math.random().toString(36).slice(2)}`;
  }, SUITE_TEST_TIMEOUT_MS);
  afterEach(async () => harness.close());

  /** Starts a first attempt held inside its operation until the test settles `finish`. */
  async function firstAttempt(handler: IdempotencyHandler, options: ExecuteOptions = {}) {
    const entered = deferred();
    const finish = deferred<string>();
    let runs = 0;
    const operation = async () => {
      runs++;
      entered.resolve();
      return finish.promise;
    };
    const first = outcome(handler.execute(payments(), operation, { isPermanentError, ...options }));
    await entered.promise;
    return { first, finish, runs: () => runs };
  }

  it("a duplicate waits for the first attempt and replays its result; the operation runs once", async () => {
    const handler = newHandler({ waitMs: 10_000 });
    const { first, finish, runs } = await firstAttempt(handler);
    let duplicateRan = false;
    const duplicate = outcome(handler.execute(payments(), () => (duplicateRan = true)));
    await watched.getsReached(2);
    finish.resolve("ch_1");
    expect(await first).toEqual({ ok: true, value: { response: "ch_1", replayed: false } });
    expect(await duplicate).toEqual({ ok: true, value: { response: "ch_1", replayed: true } });
    expect(runs()).toBe(1);
    expect(duplicateRan).toBe(false);
  });

  it("the first attempt fails permanently: the waiter gets REQUEST_FAILED, as any retry would", async () => {
    const handler = newHandler({ waitMs: 10_000 });
    const { first, finish } = await firstAttempt(handler);
    const duplicate = outcome(handler.execute(payments(), () => "never"));
    await watched.getsReached(1);
    finish.reject(new CardDeclined("declined"));
    expect(await first).toMatchObject({ ok: false, error: expect.any(CardDeclined) });
    expect(await duplicate).toMatchObject({ ok: false, code: "REQUEST_FAILED" });
  });

  it("the first attempt fails transiently: one of several waiters takes the key and runs, the others replay its result", async () => {
    const handler = newHandler({ waitMs: 10_000 });
    const { first, finish } = await firstAttempt(handler);
    let waiterRuns = 0;
    const charge = async () => `ch_waiter_${++waiterRuns}`;
    const waiters = Array.from({ length: 4 }, () => outcome(handler.execute(payments(), charge, { isPermanentError })));
    await watched.getsReached(4);
    finish.reject(new GatewayTimeout("bank timeout"));
    expect(await first).toMatchObject({ ok: false, error: expect.any(GatewayTimeout) });
    const answers = await Promise.all(waiters);
    expect(waiterRuns).toBe(1);
    expect(answers.every((answer) => answer.ok && answer.value.response === "ch_waiter_1")).toBe(true);
    expect(answers.filter((answer) => answer.ok && !answer.value.replayed)).toHaveLength(1);
  });

  it("the deadline passes: REQUEST_IN_PROGRESS with Retry-After, after about waitMs, having polled a bounded number of times", async () => {
    const handler = newHandler({ waitMs: 150, retryAfterSeconds: 2 });
    const { first, finish } = await firstAttempt(handler);
    const started = performance.now();
    const duplicate = await outcome(handler.execute(payments(), () => "never"));
    const elapsed = performance.now() - started;
    expect(duplicate).toMatchObject({ ok: false, code: "REQUEST_IN_PROGRESS", error: { retryAfterSeconds: 2 } });
    expect(elapsed).toBeGreaterThanOrEqual(145);
    expect(watched.gets).toBeGreaterThanOrEqual(2);
    expect(watched.gets).toBeLessThanOrEqual(maxPollsWithin(150));
    finish.resolve("ch_1");
    await first;
  });

  it("a different payload is KEY_REUSED_WITH_DIFFERENT_REQUEST at once: it never waits", async () => {
    const handler = newHandler({ waitMs: 10_000 });
    const { first, finish } = await firstAttempt(handler);
    const reused = await outcome(handler.execute(payments({ amount: 999 }), () => "never"));
    expect(reused).toMatchObject({ ok: false, code: "KEY_REUSED_WITH_DIFFERENT_REQUEST" });
    expect(watched.gets).toBe(0);
    finish.resolve("ch_1");
    await first;
  });

  it("waitMs 0 (the default) answers REQUEST_IN_PROGRESS at once, with no poll; a call's waitMs overrides the handler's", async () => {
    const handler = newHandler();
    const { first, finish } = await firstAttempt(handler);
    expect(await outcome(handler.execute(payments(), () => "never"))).toMatchObject({
      ok: false,
      code: "REQUEST_IN_PROGRESS",
    });
    expect(watched.gets).toBe(0);
    const waiting = outcome(handler.execute(payments(), () => "never", { waitMs: 10_000 }));
    await watched.getsReached(1);
    finish.resolve("ch_1");
    expect(await waiting).toEqual({ ok: true, value: { response: "ch_1", replayed: true } });
    const waitingHandler = newHandler({ waitMs: 10_000 });
    key = `${key}-second`;
    const second = await firstAttempt(waitingHandler);
    expect(await outcome(waitingHandler.execute(payments(), () => "never", { waitMs: 0 }))).toMatchObject({
      ok: false,
      code: "REQUEST_IN_PROGRESS",
    });
    second.finish.resolve("ch_2");
    await Promise.all([first, second.first]);
  });

  it("the store fails mid-wait: STORE_UNAVAILABLE, and the key is left to the first attempt", async () => {
    const logger = recordingLogger();
    const handler = newHandler({ waitMs: 10_000, logger });
    const { first, finish } = await firstAttempt(handler);
    const duplicate = outcome(handler.execute(payments(), () => "never"));
    await watched.getsReached(1);
    watched.breakGet("fail");
    expect(await duplicate).toMatchObject({ ok: false, code: "STORE_UNAVAILABLE" });
    expect(
      logger.lines.find((line) => line.msg === "idempotency: a duplicate waited for the first attempt"),
    ).toMatchObject({ outcome: "store_unavailable" });
    watched.breakGet(undefined);
    finish.resolve("ch_1");
    expect(await first).toEqual({ ok: true, value: { response: "ch_1", replayed: false } });
  });

  it("a store that stops answering mid-wait counts as down: STORE_UNAVAILABLE after storeTimeoutMs", async () => {
    const metrics = recordingMetrics();
    const handler = newHandler({ waitMs: 10_000, storeTimeoutMs: 100, metrics });
    const { first, finish } = await firstAttempt(handler);
    const duplicate = outcome(handler.execute(payments(), () => "never"));
    await watched.getsReached(1);
    watched.breakGet("hang");
    expect(await duplicate).toMatchObject({ ok: false, code: "STORE_UNAVAILABLE" });
    expect(metrics.total("storeErrors", { method: "get" })).toBe(1);
    finish.resolve("ch_1");
    await first;
  });

  it("a waiter whose caller went away stops polling and answers REQUEST_IN_PROGRESS", async () => {
    const handler = newHandler({ waitMs: 10_000 });
    const { first, finish } = await firstAttempt(handler);
    const gone = new AbortController();
    const started = performance.now();
    const duplicate = outcome(handler.execute(payments(), () => "never", { signal: gone.signal }));
    await watched.getsReached(1);
    gone.abort();
    expect(await duplicate).toMatchObject({ ok: false, code: "REQUEST_IN_PROGRESS" });
    expect(performance.now() - started).toBeLessThan(5_000);
    const polls = watched.gets;
    finish.resolve("ch_1");
    await first;
    expect(watched.gets).toBe(polls);
  });

  it("logs one line per waited duplicate (none per poll) and counts idempotency_waits_total by outcome", async () => {
    const logger = recordingLogger();
    const metrics = recordingMetrics();
    const handler = newHandler({ waitMs: 10_000, logger, metrics });
    const { first, finish } = await firstAttempt(handler);
    const duplicate = outcome(handler.execute(payments(), () => "never"));
    await watched.getsReached(3);
    finish.resolve("ch_1");
    await Promise.all([first, duplicate]);
    const waited = logger.lines.filter((line) => line.msg === "idempotency: a duplicate waited for the first attempt");
    expect(waited).toEqual([
      expect.objectContaining({ level: "info", key, outcome: "replayed", waitedMs: expect.any(Number) }),
    ]);
    expect(metrics.total("waits", { operation: "payments:create", outcome: "replayed" })).toBe(1);
    expect(metrics.total("duplicates", { status: "SUCCESS" })).toBe(1);
  });
});

describe("a long wait on MemoryStore, under fake timers", () => {
  afterEach(() => void vi.useRealTimers());

  it("polls with backoff capped at 250 ms: a minute's wait costs at most maxPollsWithin(60 s) gets, and ends at the deadline", async () => {
    vi.useFakeTimers();
    const { fresh } = await memoryStoreKind.open();
    const watched = watchedStore((await fresh()).store);
    const handler = new IdempotencyHandler(watched.store, undefined, { waitMs: 60_000, heartbeatIntervalMs: 0 });
    const scope = { operation: "op", userId: "u", key: "k", payload: 1 };
    const finish = deferred<string>();
    const first = handler.execute(scope, () => finish.promise);
    await vi.advanceTimersByTimeAsync(0);
    const started = Date.now();
    const duplicate = outcome(handler.execute(scope, () => "never"));
    await vi.advanceTimersByTimeAsync(59_999);
    expect(watched.gets).toBeGreaterThanOrEqual(60_000 / 250);
    await vi.advanceTimersByTimeAsync(1);
    expect(await duplicate).toMatchObject({ ok: false, code: "REQUEST_IN_PROGRESS" });
    expect(Date.now() - started).toBe(60_000);
    expect(watched.gets).toBeLessThanOrEqual(maxPollsWithin(60_000));
    finish.resolve("done");
    await first;
  });
});

describe("waitMs is checked", () => {
  const store = memoryStoreKind;
  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY, 300_001, "1000" as unknown as number])(
    "refuses %s as a handler default and as a call's option",
    async (waitMs) => {
      const { fresh } = await store.open();
      const { store: memory } = await fresh();
      expect(() => new IdempotencyHandler(memory, undefined, { waitMs })).toThrow(RangeError);
      expect(() => new IdempotencyHandler(memory, undefined, { waitMs })).toThrow(
        /`waitMs` must be a number of milliseconds from 0 to 300000/,
      );
      const handler = new IdempotencyHandler(memory);
      const call = handler.execute({ operation: "op", userId: "u", key: "k", payload: 1 }, () => "ran", { waitMs });
      await expect(call).rejects.toThrow(RangeError);
    },
  );
});
