// Each decision of the handler writes one structured line carrying the scope and a status, and counts its metric.
import { describe, expect, it } from "vitest";
import { IdempotencyHandler, type IdempotencyHandlerOptions } from "./handler";
import { MemoryStore } from "./testing/memory-store";
import { deferred, outcome } from "./testing/deferred";
import { recordingLogger, recordingMetrics, type LogLine } from "./testing/recorders";
import type { CachedRecord, IdempotencyCache, IdempotencyStore } from "./types";
import { UnkeptAnswer } from "./unkept-answer";

const MINUTE = 60_000;
const scope = { operation: "payments:create", userId: "u_1", key: "k-1" };
const payment = (amount = 100) => ({ ...scope, payload: { amount } });
class ValidationError extends Error {}
class GatewayTimeout extends Error {}
const isPermanentError = (err: unknown) => err instanceof ValidationError;

function setup(options: IdempotencyHandlerOptions & { cache?: IdempotencyCache; store?: IdempotencyStore } = {}) {
  const clock = { now: Date.UTC(2030, 0, 1) };
  const logger = recordingLogger();
  const metrics = recordingMetrics();
  const store = options.store ?? new MemoryStore({ now: () => clock.now });
  const handler = new IdempotencyHandler(store, options.cache, {
    heartbeatIntervalMs: 0,
    maxRetries: 2,
    logger,
    metrics,
    ...options,
  });
  /** The decision lines `act` wrote, so each decision is checked on its own (the debug lines holding stacks are checked apart). */
  const linesOf = async (act: () => Promise<unknown>): Promise<LogLine[]> => {
    const from = logger.lines.length;
    await act();
    return logger.lines.slice(from).filter((line) => !line.msg.endsWith("(stack)"));
  };
  return { clock, store, handler, metrics, linesOf, logger };
}

const line = (level: string, msg: string, fields: Record<string, unknown>): unknown =>
  expect.objectContaining({ level, msg: `idempotency: ${msg}`, ...fields });

describe("every handler decision is logged with { key, userId, operation, status } and counted", () => {
  it("lock acquired, then executed and stored", async () => {
    const { handler, metrics, linesOf } = setup();
    expect(await linesOf(() => handler.execute(payment(), () => "ok"))).toEqual([
      line("debug", "lock acquired", { ...scope, status: "PROCESSING" }),
      line("info", "executed and stored the response", { ...scope, status: "SUCCESS" }),
    ]);
    expect(metrics.total("executions", { operation: scope.operation, outcome: "success" })).toBe(1);
  });

  it("dedupe hit, from the store and then from the cache", async () => {
    const entries = new Map<string, CachedRecord>();
    const cache: IdempotencyCache = {
      get: ({ key }) => Promise.resolve(entries.get(key)),
      set: ({ key }, record) => Promise.resolve(void entries.set(key, record)),
    };
    const { handler, metrics, linesOf } = setup({ cache });
    await handler.execute(payment(), () => "ok");
    entries.clear();

    expect(await linesOf(() => handler.execute(payment(), () => "ok"))).toEqual([
      line("info", "replayed a stored response", { ...scope, status: "SUCCESS", source: "store" }),
    ]);
    expect(await linesOf(() => handler.execute(payment(), () => "ok"))).toEqual([
      line("info", "replayed a stored response", { ...scope, status: "SUCCESS", source: "cache" }),
    ]);
    expect(metrics.total("duplicates", { operation: scope.operation, status: "SUCCESS" })).toBe(2);
    expect(metrics.total("cacheHits", { operation: scope.operation })).toBe(1);
  });

  it("conflict: the key reused with another payload", async () => {
    const { handler, metrics, linesOf } = setup();
    await handler.execute(payment(), () => "ok");
    expect(await linesOf(() => outcome(handler.execute(payment(999), () => "ok")))).toEqual([
      line("warn", "key reused with a different request", { ...scope, status: "SUCCESS" }),
    ]);
    expect(metrics.total("conflicts", { operation: scope.operation })).toBe(1);
  });

  it("in progress: a duplicate while the first still runs", async () => {
    const { handler, metrics, linesOf } = setup();
    const started = deferred();
    const gate = deferred<string>();
    const first = handler.execute(payment(), () => {
      started.resolve();
      return gate.promise;
    });
    await started.promise;
    expect(await linesOf(() => outcome(handler.execute(payment(), () => "ok")))).toEqual([
      line("info", "rejected a duplicate still in progress", { ...scope, status: "PROCESSING" }),
    ]);
    expect(metrics.total("duplicates", { operation: scope.operation, status: "PROCESSING" })).toBe(1);
    gate.resolve("ok");
    await first;
  });

  it("failure classified as permanent, and the retry rejected", async () => {
    const { handler, metrics, linesOf } = setup();
    const lines = await linesOf(() =>
      outcome(handler.execute(payment(), () => Promise.reject(new ValidationError("bad card")), { isPermanentError })),
    );
    expect(lines).toEqual([
      line("debug", "lock acquired", { ...scope, status: "PROCESSING" }),
      line("info", "permanent failure, key marked FAILED", {
        ...scope,
        status: "FAILED",
        err: { name: "ValidationError", message: "bad card" },
      }),
    ]);
    expect(metrics.total("executions", { operation: scope.operation, outcome: "permanent_failure" })).toBe(1);

    expect(await linesOf(() => outcome(handler.execute(payment(), () => "ok")))).toEqual([
      line("info", "rejected a retry of a failed request", { ...scope, status: "FAILED" }),
    ]);
    expect(metrics.total("duplicates", { operation: scope.operation, status: "FAILED" })).toBe(1);
  });

  it("failure classified as transient: retry counted, then the key poisoned when the budget is spent", async () => {
    const { handler, metrics, linesOf } = setup({ maxRetries: 2 });
    const fail = () =>
      outcome(handler.execute(payment(), () => Promise.reject(new GatewayTimeout("timeout")), { isPermanentError }));

    expect(await linesOf(fail)).toEqual([
      line("debug", "lock acquired", { ...scope, status: "PROCESSING" }),
      line("info", "transient failure, key released for retry", { ...scope, status: "RELEASED", retryCount: 1 }),
    ]);
    expect(metrics.total("retries", { operation: scope.operation })).toBe(1);
    expect(metrics.total("executions", { outcome: "transient_failure" })).toBe(1);

    expect(await linesOf(fail)).toEqual([
      line("debug", "lock acquired", { ...scope, status: "PROCESSING" }),
      line("warn", "retry budget spent, key poisoned", { ...scope, status: "FAILED", retryCount: 2 }),
    ]);
    expect(metrics.total("poisoned", { operation: scope.operation })).toBe(1);
    expect(metrics.total("executions", { outcome: "poisoned" })).toBe(1);
    expect(metrics.total("retries")).toBe(1);
  });

  it("uncapturable answer: the key released without spending a retry, however often it happens", async () => {
    const { handler, metrics, linesOf } = setup({ maxRetries: 2 });
    const streamed = new UnkeptAnswer("streamed", "uncaptured", { name: "StreamedAnswer", message: "streamed" });
    const stream = () =>
      outcome(
        handler.execute(payment(), () => streamed, {
          isPermanentError: () => true, // asked only about thrown failures: an uncapturable answer is not one
        }),
      );

    for (let attempt = 0; attempt < 3; attempt++) {
      expect(await linesOf(stream)).toEqual([
        line("debug", "lock acquired", { ...scope, status: "PROCESSING" }),
        line("warn", "the answer could not be captured, key released", { ...scope, status: "RELEASED" }),
      ]);
    }
    expect(metrics.total("executions", { operation: scope.operation, outcome: "uncaptured" })).toBe(3);
    expect(metrics.total("retries")).toBe(0);
    expect(metrics.total("poisoned")).toBe(0);
    expect((await handler.execute(payment(), () => "ok")).response).toBe("ok");
  });

  it("recovered: a crashed execution released, and poisoned on the last recovery", async () => {
    const { clock, handler, metrics, linesOf } = setup({ maxRetries: 2 });
    const crash = async () => {
      const started = deferred();
      void handler.execute(payment(), () => {
        started.resolve();
        return new Promise<never>(() => {}); // a worker that died mid-operation
      });
      await started.promise;
      clock.now += 10 * MINUTE;
    };

    await crash();
    expect(await linesOf(() => handler.recoverStuckRecords({ timeoutInMs: 5 * MINUTE }))).toEqual([
      line("warn", "recovered a stuck record", { ...scope, status: "RELEASED", retryCount: 1 }),
    ]);
    expect(metrics.total("recovered", { operation: scope.operation })).toBe(1);

    await crash();
    expect(await linesOf(() => handler.recoverStuckRecords({ timeoutInMs: 5 * MINUTE }))).toEqual([
      line("warn", "recovered a stuck record", { ...scope, status: "FAILED", retryCount: 2 }),
    ]);
    expect(metrics.total("recovered")).toBe(2);
    expect(metrics.total("poisoned", { operation: scope.operation })).toBe(1);
  });

  it("cleaned: one line per run with the number deleted (a batch has no single key)", async () => {
    const { clock, handler, metrics, linesOf } = setup({ ttlMs: MINUTE });
    await handler.execute(payment(), () => "ok");
    await handler.execute({ ...payment(), key: "k-2" }, () => "ok");
    clock.now += 2 * MINUTE;

    expect(await linesOf(() => handler.cleanupExpiredRecords())).toEqual([
      line("info", "cleaned up expired records", { status: "CLEANED", deleted: 2 }),
    ]);
    expect(metrics.total("cleaned")).toBe(2);
  });

  it("store unavailable: the refusal names the key it refused", async () => {
    const down = new MemoryStore();
    down.create = () => Promise.reject(new Error("ECONNREFUSED"));
    const { handler, metrics, linesOf } = setup({ store: down });
    expect(await linesOf(() => outcome(handler.execute(payment(), () => "ok")))).toEqual([
      line("error", "store unavailable", { ...scope, status: "STORE_UNAVAILABLE", method: "create" }),
    ]);
    expect(metrics.total("storeErrors", { method: "create" })).toBe(1);
  });
});

// Regression: a client error's headers (axios keeps Authorization in
// `err.config.headers` and `err.request._header`) and a stack at info reached the logs.
describe("a failed operation's error in the logs", () => {
  it("is { name, message, code } at the decision's level, and its stack only on a debug line", async () => {
    const { handler, logger } = setup();
    const axiosLike = Object.assign(new Error("Request failed with status code 502"), {
      name: "AxiosError",
      code: "ERR_BAD_RESPONSE",
      config: { headers: { Authorization: "Bearer secret-token" } },
      request: { _header: "POST /charge HTTP/1.1\r\nAuthorization: Bearer secret-token\r\n\r\n" },
      response: { status: 502, data: Buffer.from("bad gateway") },
    });
    await outcome(handler.execute(payment(), () => Promise.reject(axiosLike)));
    const decision = logger.lines.find((line) => line.msg === "idempotency: transient failure, key released for retry");
    expect(decision?.err).toEqual({
      name: "AxiosError",
      message: "Request failed with status code 502",
      code: "ERR_BAD_RESPONSE",
    });
    const stack = logger.lines.find(
      (line) => line.msg === "idempotency: transient failure, key released for retry (stack)",
    );
    expect(stack).toMatchObject({
      level: "debug",
      err: { name: "AxiosError", stack: expect.stringContaining("AxiosError") as unknown },
    });
    expect(JSON.stringify(logger.lines)).not.toContain("secret-token");
    expect(JSON.stringify(logger.lines)).not.toContain('"type":"Buffer"');
  });

  it("is summarised whatever was thrown", async () => {
    const { handler, logger } = setup();
    const thrown: unknown = "a string";
    await outcome(
      handler.execute(payment(), () => {
        throw thrown;
      }),
    );
    expect(
      logger.lines.find((line) => line.msg === "idempotency: transient failure, key released for retry")?.err,
    ).toEqual({ name: "string", message: "a string" });
  });
});
