// Maintenance for stores that expire records themselves (Redis, DynamoDB): recovery only, with no lock.
import type { IdempotencyHandler } from "../handler";
import type { IdempotencyLogger } from "../logger";
import type { MaintenanceJobs } from "./lifecycle";

/**
 * Two recoveries never take the same record, so this needs no lock across instances.
 *
 * @example
 * idempotencyLifecycle({ jobs: recoveryJobs(handler, logger), logger, close: () => redis.quit().then(() => {}) });
 */
export function recoveryJobs<T>(handler: IdempotencyHandler<T>, logger: IdempotencyLogger, everyMs = 300_000): MaintenanceJobs {
  const recover = async () => logger.info({ job: "recover", ...(await handler.recoverStuckRecords()) }, "idempotency: maintenance ran");
  return {
    start(onError) {
      const timer = setInterval(() => void recover().catch((err: unknown) => onError(err, "recover")), everyMs);
      timer.unref();
      return { stop: () => clearInterval(timer) };
    },
    runOnce: recover,
  };
}
