// Maintenance for stores that need no lock across instances (Redis, DynamoDB, MySQL, SQLite): recovery, and
// for the SQL stores, whose expired rows stay until deleted, cleanup.
import type { IdempotencyHandler } from "../handler";
import type { BlockLogger as IdempotencyLogger } from "../logger";
import type { MaintenanceJobs } from "./lifecycle";

export type RecoveryJobsOptions = {
  /**
   * Deletes expired records this often (MySQL, SQLite: Redis and DynamoDB expire them themselves).
   * Two instances deleting at once is harmless: each DELETE takes a bounded batch of expired rows.
   */
  cleanupEveryMs?: number;
  /** Rows per cleanup batch; cleanup repeats up to `cleanupBatches` while batches come back full. @default 500 */
  cleanupLimit?: number;
  /** @default 20 */
  cleanupBatches?: number;
};

/**
 * Two recoveries never take the same record, so this needs no lock across instances.
 *
 * @example
 * idempotencyLifecycle({ jobs: recoveryJobs(handler, logger), logger, close: () => redis.quit().then(() => {}) });
 * recoveryJobs(handler, logger, 300_000, { cleanupEveryMs: 3_600_000 }); // MySqlStore, SqliteStore
 */
export function recoveryJobs<T>(
  handler: IdempotencyHandler<T>,
  logger: IdempotencyLogger,
  everyMs = 300_000,
  options: RecoveryJobsOptions = {},
): MaintenanceJobs {
  const recover = async () =>
    logger.info({ job: "recover", ...(await handler.recoverStuckRecords()) }, "idempotency: maintenance ran");
  const { cleanupEveryMs, cleanupLimit = 500, cleanupBatches = 20 } = options;
  const cleanup = async () => {
    let deleted = 0;
    // Bounded batches drain a backlog without one long delete holding locks.
    for (let batch = 0; batch < cleanupBatches; batch++) {
      const result = await handler.cleanupExpiredRecords({ limit: cleanupLimit });
      deleted += result.deleted;
      if (result.deleted < cleanupLimit) break;
    }
    logger.info({ job: "cleanup", deleted }, "idempotency: maintenance ran");
  };
  return {
    start(onError) {
      const every = (job: string, run: () => Promise<void>, ms: number) =>
        setInterval(() => void run().catch((err: unknown) => onError(err, job)), ms);
      const timers = [
        every("recover", recover, everyMs),
        ...(cleanupEveryMs ? [every("cleanup", cleanup, cleanupEveryMs)] : []),
      ];
      for (const timer of timers) timer.unref();
      return { stop: () => timers.forEach((timer) => clearInterval(timer)) };
    },
    async runOnce() {
      await recover();
      if (cleanupEveryMs) await cleanup();
    },
  };
}
