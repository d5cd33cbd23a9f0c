// The production checklist at the handler level, against every store implementation.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { IdempotencyHandler, type IdempotencyHandlerOptions } from "@/blocks/idempotency/handler";
import { deferred, outcome } from "@/blocks/idempotency/testing/deferred";
import { recordingLogger, recordingMetrics } from "@/blocks/idempotency/testing/recorders";
import { SERVICE_START_TIMEOUT_MS, SUITE_TEST_TIMEOUT_MS } from "./support/services";
import { allStoreKinds, type StoreHarness, type StoreKind } from "./support/store-harness";

const MINUTE = 60_000;
class ValidationError extends Error {}
class GatewayTimeout extends Error {}
const isPermanentError = (err: unknown) => err instanceof ValidationError;

describe.each(allStoreKinds)("IdempotencyHandler on $name", { timeout: SUITE_TEST_TIMEOUT_MS }, (kind: StoreKind) => {
  let opened: Awaited<ReturnType<StoreKind["open"]>>;
  let harness: StoreHarness;
  let n = 0;
  let key: string;
  const payments = (payload: unknown = { amount: 100, currency: "EUR" }, overrides = {}) => ({
    operation: "payments:create",
    userId: "u_1",
    key,
    payload,
    ...overrides,
  });
  const newHandler = (options: IdempotencyHandlerOptions = {}) =>
    new IdempotencyHandler(harness.store, undefined, options);

  beforeAll(async () => {
    opened = await kind.open();
  }, SERVICE_START_TIMEOUT_MS);
  afterAll(async () => opened.close());
  beforeEach(async () => {
    harness = await opened.fresh();
    key = `key-${++n}`;
  }, SUITE_TEST_TIMEOUT_MS);
  afterEach(async () => harness.close());

  it("replays a success: the operation runs once and the replay is identical to the first answer", async () => {
    const handler = newHandler();
    let runs = 0;
    const charge = async () => ({ id: `ch_${++runs}`, zeta: true, alpha: { b: 2, a: 1 } });
    const first = await handler.execute(payments(), charge);
    const retry = await handler.execute(payments(), charge);
    expect(runs).toBe(1);
    expect(first).toEqual({ response: { id: "ch_1", zeta: true, alpha: { b: 2, a: 1 } }, replayed: false });
    expect(retry.replayed).toBe(true);
    expect(JSON.stringify(retry.response)).toBe(JSON.stringify(first.response));
    expect(JSON.stringify(retry.response)).toBe('{"id":"ch_1","zeta":true,"alpha":{"b":2,"a":1}}');
  });

  it("rejects the same key with a different payload as KEY_REUSED_WITH_DIFFERENT_REQUEST", async () => {
    const handler = newHandler();
    await handler.execute(payments({ amount: 100 }), async () => "ok");
    const reuse = await outcome(handler.execute(payments({ amount: 999 }), async () => "never"));
    expect(reuse).toMatchObject({ ok: false, code: "KEY_REUSED_WITH_DIFFERENT_REQUEST" });
  });

  it("fingerprints payloads canonically: key order never matters", async () => {
    const handler = newHandler();
    await handler.execute(payments({ amount: 100, meta: { a: 1, b: 2 } }), async () => "ok");
    const retry = await handler.execute(payments({ meta: { b: 2, a: 1 }, amount: 100 }), async () => "never");
    expect(retry).toEqual({ response: "ok", replayed: true });
  });

  it("runs 50 concurrent duplicates exactly once; the other 49 get REQUEST_IN_PROGRESS at once", async () => {
    const handler = newHandler();
    const gate = deferred();
    let runs = 0;
    let settled = 0;
    const all = Array.from({ length: 50 }, () =>
      outcome(
        handler.execute(payments(), async () => {
          runs++;
          await gate.promise;
          return "charged";
        }),
      ).finally(() => {
        if (++settled === 49) gate.resolve();
      }),
    );
    const results = await Promise.all(all);
    expect(runs).toBe(1);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    const rejected = results.filter((r) => !r.ok);
    expect(rejected).toHaveLength(49);
    expect(rejected.every((r) => !r.ok && r.code === "REQUEST_IN_PROGRESS")).toBe(true);
  });

  it("poisons the key on a permanent failure: the caller gets its own error, retries get REQUEST_FAILED", async () => {
    const handler = newHandler();
    const declined = new ValidationError("amount must be positive");
    await expect(handler.execute(payments(), async () => Promise.reject(declined), { isPermanentError })).rejects.toBe(
      declined,
    );
    const retry = await outcome(handler.execute(payments(), async () => "never", { isPermanentError }));
    expect(retry).toMatchObject({ ok: false, code: "REQUEST_FAILED" });
  });

  it("releases the key on a transient failure, and the retry executes", async () => {
    const handler = newHandler();
    const timeout = new GatewayTimeout("bank timed out");
    await expect(handler.execute(payments(), async () => Promise.reject(timeout), { isPermanentError })).rejects.toBe(
      timeout,
    );
    const retry = await handler.execute(payments(), async () => "charged", { isPermanentError });
    expect(retry).toEqual({ response: "charged", replayed: false });
  });

  it("poisons the key after three transient failures; each of the three callers got its own error", async () => {
    const handler = newHandler();
    let runs = 0;
    const flaky = async () => Promise.reject(new GatewayTimeout(`attempt ${++runs}`));
    for (let attempt = 1; attempt <= 3; attempt++) {
      await expect(handler.execute(payments(), flaky, { isPermanentError })).rejects.toThrow(`attempt ${attempt}`);
    }
    const fourth = await outcome(handler.execute(payments(), flaky, { isPermanentError }));
    expect(fourth).toMatchObject({ ok: false, code: "REQUEST_FAILED" });
    expect(runs).toBe(3);
  });

  it("isolates keys per user and per operation", async () => {
    const handler = newHandler();
    const runs: string[] = [];
    const op = (label: string) => async () => (runs.push(label), label);
    await handler.execute(payments(), op("u_1"));
    expect((await handler.execute(payments(undefined, { userId: "u_2" }), op("u_2"))).response).toBe("u_2");
    expect((await handler.execute(payments(undefined, { operation: "refunds:create" }), op("refund"))).response).toBe(
      "refund",
    );
    expect(runs).toEqual(["u_1", "u_2", "refund"]);
  });

  it("recoverStuckRecords unblocks a crashed worker's key and counts the crash against the budget", async () => {
    const handler = newHandler({ heartbeatIntervalMs: 0 });
    const crashed = () => void handler.execute(payments(), () => new Promise<never>(() => {}));
    for (let crash = 1; crash <= 3; crash++) {
      crashed();
      await expect.poll(() => harness.store.get(payments())).toMatchObject({ status: "PROCESSING" });
      expect(await outcome(handler.execute(payments(), async () => "never"))).toMatchObject({
        code: "REQUEST_IN_PROGRESS",
      });
      await harness.advanceTime(10 * MINUTE);
      const recovered = await handler.recoverStuckRecords({ timeoutInMs: 5 * MINUTE, limit: 100 });
      expect(recovered).toEqual(crash < 3 ? { released: 1, poisoned: 0 } : { released: 0, poisoned: 1 });
    }
    expect(await outcome(handler.execute(payments(), async () => "never"))).toMatchObject({ code: "REQUEST_FAILED" });
  });

  it("lets the client's retry execute once after a recovered crash", async () => {
    const handler = newHandler({ heartbeatIntervalMs: 0 });
    void handler.execute(payments(), () => new Promise<never>(() => {}));
    await expect.poll(() => harness.store.get(payments())).toBeDefined();
    await harness.advanceTime(10 * MINUTE);
    await handler.recoverStuckRecords({ timeoutInMs: 5 * MINUTE });
    expect(await handler.execute(payments(), async () => "charged")).toEqual({ response: "charged", replayed: false });
    expect(await handler.execute(payments(), async () => "again")).toEqual({ response: "charged", replayed: true });
  });

  it.skipIf(kind.expiresByItself)("cleanupExpiredRecords frees an expired key for a new execution", async () => {
    const metrics = recordingMetrics();
    const handler = newHandler({ ttlMs: 60 * MINUTE, metrics });
    await handler.execute(payments(), async () => "first");
    await handler.execute(payments(undefined, { key: `${key}-other` }), async () => "other");
    await harness.advanceTime(61 * MINUTE);
    expect(await handler.cleanupExpiredRecords({ limit: 500 })).toEqual({ deleted: 2 });
    expect(metrics.total("cleaned")).toBe(2);
    expect(await handler.execute(payments(), async () => "second")).toEqual({ response: "second", replayed: false });
  });

  it("rejects a stale execution's late completion: the record keeps the new owner's response", async () => {
    const logger = recordingLogger();
    const handler = newHandler({ heartbeatIntervalMs: 0, logger });
    const stale = deferred<string>();
    const staleRun = handler.execute(payments(), () => stale.promise);
    await expect.poll(() => harness.store.get(payments())).toBeDefined();
    await harness.advanceTime(10 * MINUTE);
    await handler.recoverStuckRecords({ timeoutInMs: 5 * MINUTE });
    expect(await handler.execute(payments(), async () => "new owner")).toEqual({
      response: "new owner",
      replayed: false,
    });
    stale.resolve("stale owner");
    expect(await staleRun).toEqual({ response: "stale owner", replayed: false });
    expect(await handler.execute(payments(), async () => "never")).toEqual({ response: "new owner", replayed: true });
    expect(logger.lines).toContainEqual(expect.objectContaining({ key, status: "LEASE_LOST", level: "error" }));
  });

  it("keeps a long execution alive with heartbeats, so recovery leaves it alone", async () => {
    const handler = newHandler({ heartbeatIntervalMs: 10 });
    const gate = deferred<string>();
    const run = handler.execute(payments(), () => gate.promise);
    await expect.poll(() => harness.store.get(payments())).toBeDefined();
    for (let minute = 0; minute < 3; minute++) {
      await harness.advanceTime(4 * MINUTE);
      const before = (await harness.store.get(payments()))?.updatedAt.getTime() ?? 0;
      await expect.poll(async () => (await harness.store.get(payments()))?.updatedAt.getTime()).toBeGreaterThan(before);
      expect(await handler.recoverStuckRecords({ timeoutInMs: 5 * MINUTE })).toEqual({ released: 0, poisoned: 0 });
    }
    gate.resolve("done after 12 minutes");
    expect(await run).toEqual({ response: "done after 12 minutes", replayed: false });
  });

  it("logs every decision with key, userId, operation and status, and counts it", async () => {
    const logger = recordingLogger();
    const metrics = recordingMetrics();
    const handler = newHandler({ logger, metrics });
    await handler.execute(payments(), async () => "ok");
    await handler.execute(payments(), async () => "ok");
    await outcome(handler.execute(payments({ amount: 1 }), async () => "ok"));
    const scope = { key, userId: "u_1", operation: "payments:create" };
    expect(logger.lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ ...scope, status: "SUCCESS", msg: "idempotency: executed and stored the response" }),
        expect.objectContaining({ ...scope, status: "SUCCESS", msg: "idempotency: replayed a stored response" }),
        expect.objectContaining({
          ...scope,
          status: "SUCCESS",
          msg: "idempotency: key reused with a different request",
        }),
      ]),
    );
    expect(metrics.total("executions", { outcome: "success" })).toBe(1);
    expect(metrics.total("duplicates", { status: "SUCCESS" })).toBe(1);
    expect(metrics.total("conflicts")).toBe(1);
  });
});
