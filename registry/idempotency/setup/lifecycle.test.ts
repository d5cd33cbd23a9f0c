// The wiring's run and stop: jobs start once, a signal stops them, and the clients close once, after the app's own drain.
import { afterEach, describe, expect, it, vi } from "vitest";
import type { BlockLogger as IdempotencyLogger } from "../logger";
import { idempotencyLifecycle, type MaintenanceJobs } from "./lifecycle";

const quiet: IdempotencyLogger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

function counted() {
  const calls = { started: 0, stopped: 0, closed: 0 };
  const jobs: MaintenanceJobs = {
    start: () => {
      calls.started++;
      return {
        stop: () => {
          calls.stopped++;
        },
      };
    },
    runOnce: () => Promise.resolve(),
  };
  const close = () => {
    calls.closed++;
    return Promise.resolve();
  };
  return { calls, lifecycle: idempotencyLifecycle({ jobs, logger: quiet, close }) };
}

describe("idempotencyLifecycle", () => {
  const before = { SIGTERM: process.listeners("SIGTERM"), SIGINT: process.listeners("SIGINT") };
  afterEach(() => {
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      for (const listener of process.listeners(signal))
        if (!before[signal].includes(listener)) process.removeListener(signal, listener);
    }
    vi.restoreAllMocks();
  });

  it("starts the jobs once however often it is asked, and closes the clients once however often close() is called", async () => {
    const { calls, lifecycle } = counted();
    lifecycle.startMaintenance();
    lifecycle.startMaintenance();
    await Promise.all([lifecycle.close(), lifecycle.close()]);
    await lifecycle.close();
    expect(calls).toEqual({ started: 1, stopped: 1, closed: 1 });
  });

  it("close() takes back the signal listeners startMaintenance() added: an app built and closed per test leaves none behind", async () => {
    const count = () => process.listenerCount("SIGTERM") + process.listenerCount("SIGINT");
    const idle = count();
    for (let app = 0; app < 12; app++) {
      const { lifecycle } = counted();
      lifecycle.startMaintenance();
      expect(count()).toBe(idle + 2);
      await lifecycle.close();
    }
    expect(count()).toBe(idle);
  });

  it("on SIGTERM with an app handler of its own: stops the jobs, leaves the clients open for the app's drain, never exits", async () => {
    const kill = vi.spyOn(process, "kill").mockImplementation(() => true);
    const { calls, lifecycle } = counted();
    const drained: string[] = [];
    process.once("SIGTERM", () => drained.push("app"));
    lifecycle.startMaintenance();
    process.emit("SIGTERM", "SIGTERM");
    await Promise.resolve();
    expect(drained).toEqual(["app"]);
    expect(calls).toEqual({ started: 1, stopped: 1, closed: 0 });
    expect(kill).not.toHaveBeenCalled();
  });

  it("on SIGINT with no app handler: closes the clients, then re-sends the signal so the process exits as Node's default would", async () => {
    const kill = vi.spyOn(process, "kill").mockImplementation(() => true);
    const { calls, lifecycle } = counted();
    lifecycle.startMaintenance();
    process.emit("SIGINT", "SIGINT");
    await vi.waitFor(() => expect(kill).toHaveBeenCalledWith(process.pid, "SIGINT"));
    expect(calls.closed).toBe(1);
  });
});
