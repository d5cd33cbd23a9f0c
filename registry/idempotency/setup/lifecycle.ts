// The wiring's run and stop: maintenance jobs, signal handling and the close order, in one place `blocks update` reaches.
import type { BlockLogger as IdempotencyLogger } from "../logger";

/** How this store's maintenance runs: on a timer in this process, or once (the cron entry). */
export type MaintenanceJobs = {
  /** Starts the timers; `stop()` clears them (a run already going finishes on its own). */
  start(onError: (err: unknown, job: string) => void): { stop(): void };
  runOnce(): Promise<void>;
};

export type Lifecycle = {
  /**
   * Runs the maintenance jobs in this process. SIGTERM and SIGINT stop them; they also close the
   * clients and exit, unless the app handles that signal itself: then the app drains its server
   * and calls `close()` (requests still running keep their database).
   */
  startMaintenance(): void;
  /** Runs the jobs once: the cron entry calls this, then `close()`. */
  runMaintenanceOnce(): Promise<void>;
  /** Stops the jobs, drops its signal listeners and closes the clients the setup opened (not the app's own), so the process can exit. Safe to call more than once. */
  close(): Promise<void>;
};

/**
 * @example
 * const lifecycle = idempotencyLifecycle({ jobs, logger, close: async () => { await redis.quit(); await pool.end(); } });
 * lifecycle.startMaintenance();
 */
export function idempotencyLifecycle(input: {
  jobs: MaintenanceJobs;
  logger: IdempotencyLogger;
  close(): Promise<void>;
}): Lifecycle {
  let maintenance: { stop(): void } | undefined;
  let closing: Promise<void> | undefined;
  const listening: Array<[NodeJS.Signals, () => void]> = [];
  const close = () =>
    (closing ??= (async () => {
      maintenance?.stop();
      // An app built and closed many times in one process (a Nest app per test) must not pile up listeners.
      for (const [signal, listener] of listening.splice(0)) process.removeListener(signal, listener);
      await input.close();
    })());
  const onSignal = (signal: NodeJS.Signals) => {
    maintenance?.stop();
    // The app handles the signal too (it drains its server): it owns the order, and calls close() once its requests are done.
    if (process.listenerCount(signal) > 0) return;
    // Nothing else handles it, and listening turned off Node's default exit: close the clients, then exit as Node would.
    void close().then(() => process.kill(process.pid, signal));
  };
  return {
    startMaintenance() {
      if (maintenance) return;
      maintenance = input.jobs.start((err, job) => input.logger.error({ err, job }, "idempotency: maintenance failed"));
      // First in line, so the count above sees the app's own handlers whether they were added before or after this.
      for (const signal of ["SIGTERM", "SIGINT"] as const) {
        const listener = () => onSignal(signal);
        listening.push([signal, listener]);
        process.prependOnceListener(signal, listener);
      }
    },
    runMaintenanceOnce: () => input.jobs.runOnce(),
    close,
  };
}
