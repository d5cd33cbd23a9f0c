// waitMs on your handler: a duplicate of a running operation waits for it instead of being told to retry.
// It runs on MemoryStore under fake timers, so it needs no database.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { IdempotencyHandler } from "./handler";
import { MemoryStore } from "./testing/memory-store";

const scope = { operation: "payments:create", userId: "u_1", key: "k_1", payload: { amount: 100 } };

/** An operation that runs until the test says how it ends. */
function held<T>() {
  let settle!: { resolve: (value: T) => void; reject: (err: unknown) => void };
  const promise = new Promise<T>((resolve, reject) => (settle = { resolve, reject }));
  return { run: () => promise, ...settle };
}

describe("waitMs", () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());
  const handler = (waitMs: number) =>
    new IdempotencyHandler(new MemoryStore(), undefined, { waitMs, heartbeatIntervalMs: 0 });

  it("replays the first attempt's result to a duplicate that arrived while it ran", async () => {
    const idem = handler(5_000);
    const first = held<{ id: string }>();
    const original = idem.execute(scope, first.run);
    const duplicate = idem.execute(scope, () => ({ id: "second charge" }));
    await vi.advanceTimersByTimeAsync(300);
    first.resolve({ id: "ch_1" });
    await vi.advanceTimersByTimeAsync(300);
    await expect(duplicate).resolves.toEqual({ response: { id: "ch_1" }, replayed: true });
    await expect(original).resolves.toEqual({ response: { id: "ch_1" }, replayed: false });
  });

  it("runs the operation itself when the first attempt fails transiently", async () => {
    const idem = handler(5_000);
    const first = held<{ id: string }>();
    const original = idem.execute(scope, first.run);
    const duplicate = idem.execute(scope, () => ({ id: "ch_2" }));
    first.reject(new Error("bank timeout"));
    await expect(original).rejects.toThrow("bank timeout");
    await vi.advanceTimersByTimeAsync(300);
    await expect(duplicate).resolves.toEqual({ response: { id: "ch_2" }, replayed: false });
  });

  it("answers REQUEST_IN_PROGRESS with Retry-After once waitMs runs out", async () => {
    const idem = handler(1_000);
    const first = held<string>();
    void idem.execute(scope, first.run);
    const duplicate = idem.execute(scope, () => "never").catch((err: unknown) => err);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await duplicate).toMatchObject({ code: "REQUEST_IN_PROGRESS", retryAfterSeconds: 1 });
    first.resolve("done");
  });

  it("refuses a waitMs that is negative, not finite or over 5 minutes", () => {
    for (const waitMs of [-1, Number.NaN, Number.POSITIVE_INFINITY, 300_001]) {
      expect(() => handler(waitMs)).toThrow(/`waitMs` must be a number of milliseconds from 0 to 300000/);
    }
  });
});
