// An operation that returns an UnkeptAnswer: the key settles from the value (freed, retried or FAILED) and the answer comes back as it is.
import { describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { UnkeptAnswer } from "@/blocks/idempotency/unkept-answer";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import { outcome } from "@/blocks/idempotency/testing/deferred";
import { recordingLogger, recordingMetrics } from "@/blocks/idempotency/testing/recorders";

const context = (key = "key-1") => ({ operation: "payments:create", userId: "u_1", key, payload: { amount: 100 } });
const reason = { name: "ErrorResponse", message: "The route answered 402: card declined" };

function setup(maxRetries = 3) {
  const store = new MemoryStore();
  const metrics = recordingMetrics();
  const logger = recordingLogger();
  const handler = new IdempotencyHandler(store, undefined, { metrics, logger, maxRetries });
  let runs = 0;
  const answering = (kind: "permanent" | "transient" | "uncaptured") => async () => {
    runs++;
    return new UnkeptAnswer({ status: 402 }, kind, reason, { status: 402, body: "declined" });
  };
  return { store, metrics, logger, handler, answering, runs: () => runs };
}

describe("an operation that returns an UnkeptAnswer", () => {
  it("permanent: the answer comes back, the key is FAILED keeping failureResponse, and no retry runs it again", async () => {
    const { handler, answering, runs, metrics, logger } = setup();
    const first = await handler.execute(context(), answering("permanent"));
    expect(first.replayed).toBe(false);
    expect(first.response).toBeInstanceOf(UnkeptAnswer);
    expect((first.response as UnkeptAnswer<{ status: number }>).answer).toEqual({ status: 402 });
    expect(await outcome(handler.execute(context(), answering("permanent")))).toMatchObject({
      ok: false,
      code: "REQUEST_FAILED",
      error: { response: { status: 402, body: "declined" } },
    });
    expect(runs()).toBe(1);
    expect(metrics.total("executions", { outcome: "permanent_failure" })).toBe(1);
    // The log line names the reason as it names an error: name and message, no stack.
    const line = logger.lines.find((l) => l.msg === "idempotency: permanent failure, key marked FAILED");
    expect(line?.err).toEqual(reason);
  });

  it("transient: each answer spends a retry and frees the key; the last one poisons it, keeping failureResponse", async () => {
    const { handler, answering, runs, metrics } = setup(2);
    expect((await handler.execute(context(), answering("transient"))).replayed).toBe(false);
    expect(metrics.total("executions", { outcome: "transient_failure" })).toBe(1);
    expect((await handler.execute(context(), answering("transient"))).replayed).toBe(false);
    expect(metrics.total("executions", { outcome: "poisoned" })).toBe(1);
    expect(await outcome(handler.execute(context(), answering("transient")))).toMatchObject({
      ok: false,
      code: "REQUEST_FAILED",
      error: { response: { status: 402 } },
    });
    expect(runs()).toBe(2);
  });

  it("uncaptured: the key is freed without spending a retry, and the next request runs", async () => {
    const { handler, answering, runs, metrics } = setup(1);
    for (let i = 0; i < 3; i++)
      expect((await handler.execute(context(), answering("uncaptured"))).replayed).toBe(false);
    expect(runs()).toBe(3);
    expect(metrics.total("executions", { outcome: "uncaptured" })).toBe(3);
    expect(metrics.total("executions", { outcome: "poisoned" })).toBe(0);
    expect(await outcome(handler.execute(context(), async () => "ran"))).toMatchObject({ ok: true });
  });

  it("on the caller's last attempt a transient answer poisons the key at once", async () => {
    const { handler, answering, metrics } = setup(5);
    await handler.execute(context(), answering("transient"), { lastAttempt: true });
    expect(metrics.total("executions", { outcome: "poisoned" })).toBe(1);
  });
});
