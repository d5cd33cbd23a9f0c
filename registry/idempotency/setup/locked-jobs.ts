// PostgreSQL's maintenance: recovery and cleanup, one instance at a time under a session advisory lock.
import type { IdempotencyHandler } from "../handler";
import type { BlockLogger as IdempotencyLogger } from "../logger";
import { runMaintenanceOnce, startMaintenance, type LockClient } from "../maintenance";
import type { MaintenanceJobs } from "./lifecycle";

/**
 * @example
 * idempotencyLifecycle({ jobs: lockedJobs(handler, pool, logger), logger, close: () => pool.end() });
 */
export function lockedJobs<T>(
  handler: IdempotencyHandler<T>,
  lock: LockClient,
  logger: IdempotencyLogger,
): MaintenanceJobs {
  return {
    start: (onError) => startMaintenance(handler, lock, { onError }),
    async runOnce() {
      for (const job of ["recover", "cleanup"] as const) {
        logger.info({ ...(await runMaintenanceOnce(job, handler, lock)) }, "idempotency: maintenance ran");
      }
    },
  };
}
