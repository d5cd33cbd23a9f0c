// Keeps a running execution's record alive, and tells the operation when another owner took it.
import type { Observer } from "./observer";
import type { IdempotencyScope, IdempotencyStore } from "./types";
import { withTimeout } from "./utils/with-timeout";

export type Lease = {
  /** Aborted when the record is no longer ours (recovered, or taken by another execution). */
  signal: AbortSignal;
  stop(): void;
};

export class LeaseLostError extends Error {
  override readonly name = "LeaseLostError";
}

/**
 * Renews the record's `updatedAt` every `intervalMs` while the operation runs, so
 * `recoverStuckRecords` never mistakes a long execution for a crashed one, and pushes its expiry
 * `ttlMs` ahead, so an execution that outlasts the TTL never loses its key to a duplicate.
 */
export function holdLease(
  store: IdempotencyStore,
  scope: IdempotencyScope,
  token: string,
  options: { intervalMs: number; timeoutMs: number; ttlMs: number; observer: Observer },
): Lease {
  const controller = new AbortController();
  if (!(options.intervalMs > 0)) return { signal: controller.signal, stop() {} };

  let beating = false;
  const timer = setInterval(async function beat() {
    if (beating) return;
    beating = true;
    try {
      const held = await withTimeout(store.heartbeat(scope, token, options.ttlMs), options.timeoutMs, "store.heartbeat");
      if (!held && !controller.signal.aborted) {
        clearInterval(timer);
        options.observer.decision("error", "idempotency: lease lost during execution", { ...scope, status: "LEASE_LOST" }, "leaseLost", {
          operation: scope.operation,
        });
        controller.abort(new LeaseLostError(`The idempotency record for key "${scope.key}" was taken over while its operation ran.`));
      }
    } catch (err) {
      // One missed beat is survivable: recovery only fires after a whole timeout without any.
      options.observer.decision("warn", "idempotency: heartbeat failed", { ...scope, status: "PROCESSING", err }, "storeErrors", {
        method: "heartbeat",
      });
    } finally {
      beating = false;
    }
  }, options.intervalMs);
  timer.unref?.();

  return {
    signal: controller.signal,
    stop: () => clearInterval(timer),
  };
}
