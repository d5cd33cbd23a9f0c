// Maintenance of the idempotency records: recovery every 5 minutes and cleanup every hour, one instance at a time.
import type { IdempotencyHandler } from "./handler";
import type { SqlClient } from "./stores/postgres-store";

/**
 * A `pg` Pool (one connection is checked out to hold the lock) or a single connection (pg.Client, PGlite).
 * A session advisory lock lives on one connection, so a pool must lend the same one for lock and unlock.
 */
export type LockClient = SqlClient & { connect?: () => Promise<SqlClient & { release(): void }> };

export type MaintenanceJob = "recover" | "cleanup";

export type MaintenanceOptions = {
  /** @default 300_000 (5 minutes) */
  recoverEveryMs?: number;
  /** @default 3_600_000 (1 hour) */
  cleanupEveryMs?: number;
  /** A PROCESSING record without a heartbeat for this long is recovered. @default 300_000 */
  stuckAfterMs?: number;
  /** Rows per recovery call. @default 100 */
  recoverLimit?: number;
  /** Rows per cleanup batch; cleanup repeats up to `cleanupBatches` while batches come back full. @default 500 */
  cleanupLimit?: number;
  /** @default 20 */
  cleanupBatches?: number;
  /** Every instance that shares this name competes for one lock. @default "idempotency-maintenance" */
  lockName?: string;
  /** Called when a run fails; the timers keep going. @default console.error */
  onError?: (err: unknown, job: MaintenanceJob) => void;
};

export type MaintenanceResult = {
  job: MaintenanceJob;
  /** False when another instance held the lock, so this one skipped the run. */
  ran: boolean;
  released?: number;
  poisoned?: number;
  deleted?: number;
};

/**
 * One run of one job, for cron or a Kubernetes CronJob; skipped when another instance is running it.
 *
 * @example
 * // scripts/idempotency-maintenance.ts, scheduled every 5 minutes by cron:
 * await runMaintenanceOnce("recover", handler, pool);
 * await runMaintenanceOnce("cleanup", handler, pool);
 * await pool.end();
 */
export async function runMaintenanceOnce(
  job: MaintenanceJob,
  handler: IdempotencyHandler,
  db: LockClient,
  options: MaintenanceOptions = {},
): Promise<MaintenanceResult> {
  const lock = `${options.lockName ?? "idempotency-maintenance"}:${job}`;
  const result = await withAdvisoryLock(db, lock, async () => {
    if (job === "recover") {
      return handler.recoverStuckRecords({
        timeoutInMs: options.stuckAfterMs ?? 300_000,
        limit: options.recoverLimit ?? 100,
      });
    }
    return cleanup(handler, options.cleanupLimit ?? 500, options.cleanupBatches ?? 20);
  });
  return result ? { job, ran: true, ...result } : { job, ran: false };
}

/**
 * Runs both jobs in this process on unref'd timers (they never keep it alive); returns `stop`.
 *
 * @example
 * const maintenance = startMaintenance(handler, pool);
 * process.on("SIGTERM", () => maintenance.stop());
 */
export function startMaintenance(
  handler: IdempotencyHandler,
  db: LockClient,
  options: MaintenanceOptions = {},
): { stop(): void } {
  const onError = options.onError ?? ((err, job) => console.error(`idempotency maintenance (${job}) failed`, err));
  const running = new Set<MaintenanceJob>();
  const tick = (job: MaintenanceJob) => () => {
    // A slow run must not pile up behind itself.
    if (running.has(job)) return;
    running.add(job);
    runMaintenanceOnce(job, handler, db, options)
      .catch((err: unknown) => onError(err, job))
      .finally(() => running.delete(job));
  };
  const timers = [
    setInterval(tick("recover"), options.recoverEveryMs ?? 300_000),
    setInterval(tick("cleanup"), options.cleanupEveryMs ?? 3_600_000),
  ];
  for (const timer of timers) timer.unref();
  return { stop: () => timers.forEach(clearInterval) };
}

/** Each batch is bounded; repeating while batches are full drains a backlog without one huge delete. */
async function cleanup(handler: IdempotencyHandler, limit: number, batches: number): Promise<{ deleted: number }> {
  let deleted = 0;
  for (let batch = 0; batch < batches; batch++) {
    const result = await handler.cleanupExpiredRecords({ limit });
    deleted += result.deleted;
    if (result.deleted < limit) break;
  }
  return { deleted };
}

/** Runs `work` only if this instance gets the lock; returns undefined when another instance holds it. */
async function withAdvisoryLock<T>(db: LockClient, name: string, work: () => Promise<T>): Promise<T | undefined> {
  const connection = db.connect ? await db.connect() : undefined;
  const client: SqlClient = connection ?? db;
  try {
    const { rows } = await client.query("SELECT pg_try_advisory_lock(hashtext($1)) AS locked", [name]);
    if ((rows[0] as { locked: boolean } | undefined)?.locked !== true) return undefined;
    try {
      return await work();
    } finally {
      await client.query("SELECT pg_advisory_unlock(hashtext($1))", [name]);
    }
  } finally {
    connection?.release();
  }
}
