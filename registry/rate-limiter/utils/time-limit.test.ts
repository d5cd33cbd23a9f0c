import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { TimeLimit, TimeoutError } from "./time-limit";

const never = () => new Promise<string>(() => {});

describe("TimeLimit: one timer for every call", () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it("gives up on a call after the limit and at most two ticks (an eighth) more, never sooner", async () => {
    const limit = new TimeLimit(200, "store");
    const outcome = limit.bound(never()).catch((err: unknown) => err);
    await vi.advanceTimersByTimeAsync(199);
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(1);
    let settled: unknown;
    void outcome.then((value) => (settled = value));
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBeUndefined();
    await vi.advanceTimersByTimeAsync(26); // 225 ms: the limit plus an eighth
    expect(settled).toBeInstanceOf(TimeoutError);
    expect((settled as Error).message).toBe("store did not answer within 200 ms");
  });

  it("times out each call on its own start: a later call still has its whole limit", async () => {
    const limit = new TimeLimit(100, "store");
    const first = limit.bound(never()).catch((err: unknown) => err);
    await vi.advanceTimersByTimeAsync(60);
    let second: unknown;
    void limit.bound(never()).catch((err: unknown) => (second = err));
    expect(await vi.advanceTimersByTimeAsync(50).then(() => first)).toBeInstanceOf(TimeoutError);
    expect(second).toBeUndefined();
    await vi.advanceTimersByTimeAsync(60);
    expect(second).toBeInstanceOf(TimeoutError);
  });

  it("answers in time pass through with their value or their own error, run onSettled, and stop the timer", async () => {
    const limit = new TimeLimit(200, "store");
    const settled = vi.fn();
    await expect(limit.bound(Promise.resolve("ok"), settled)).resolves.toBe("ok");
    const reason = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
    await expect(limit.bound(Promise.reject(reason), settled)).rejects.toBe(reason);
    expect(settled).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(25);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("runs onSettled when a call answers after it timed out (the limiter frees its slot then)", async () => {
    const limit = new TimeLimit(10, "store");
    let answer: (value: string) => void = () => {};
    const settled = vi.fn();
    const outcome = limit
      .bound(new Promise<string>((resolve) => (answer = resolve)), settled)
      .catch((err: unknown) => err);
    await vi.advanceTimersByTimeAsync(20);
    expect(await outcome).toBeInstanceOf(TimeoutError);
    expect(settled).not.toHaveBeenCalled();
    answer("late");
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toHaveBeenCalledTimes(1);
  });
});

describe("TimeLimit.watch: the caller settles its own promise", () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  const recorder = () => {
    const events: unknown[][] = [];
    return {
      events,
      watcher: {
        answered: (value: unknown) => void events.push(["answered", value]),
        failed: (reason: unknown) => void events.push(["failed", reason]),
        settled: () => void events.push(["settled"]),
      },
    };
  };

  it("an answer in time: settled, then answered with the value; the timer stops", async () => {
    const limit = new TimeLimit(200, "store");
    const { events, watcher } = recorder();
    limit.watch(Promise.resolve("ok"), watcher);
    await vi.advanceTimersByTimeAsync(0);
    expect(events).toEqual([["settled"], ["answered", "ok"]]);
    await vi.advanceTimersByTimeAsync(25);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a rejection in time: failed with the call's own reason, untouched", async () => {
    const limit = new TimeLimit(200, "store");
    const { events, watcher } = recorder();
    const reason = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
    limit.watch(Promise.reject(reason), watcher);
    await vi.advanceTimersByTimeAsync(0);
    expect(events).toEqual([["settled"], ["failed", reason]]);
  });

  it("no answer: failed with a TimeoutError once the limit has passed; a late answer only runs settled", async () => {
    const limit = new TimeLimit(10, "store");
    const { events, watcher } = recorder();
    let answer: (value: string) => void = () => {};
    limit.watch(new Promise<string>((resolve) => (answer = resolve)), watcher);
    await vi.advanceTimersByTimeAsync(9);
    expect(events).toEqual([]);
    await vi.advanceTimersByTimeAsync(11);
    expect(events).toHaveLength(1);
    expect(events[0]?.[1]).toBeInstanceOf(TimeoutError);
    answer("late");
    await vi.advanceTimersByTimeAsync(0);
    expect(events.map(([event]) => event)).toEqual(["failed", "settled"]);
  });
});
