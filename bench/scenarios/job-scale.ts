// Scenario 9: cleanupExpiredRecords and recoverStuckRecords batch time at 10k, 100k and 1M rows, with plans.
import { IdempotencyHandler, PostgresStore } from "@/blocks/idempotency";
import type pg from "pg";
import { settings } from "../config";
import { median, round } from "../report/stats";
import { ExplainClient, scanNodes } from "../support/explain-client";
import { createRunTable, dropRunTable, openPool } from "../support/services";

/** Rows each job call handles; every size holds at least BATCHES * BATCH_LIMIT rows for each job. */
const BATCH_LIMIT = 100;
const BATCHES = 8;

export type JobRun = {
  job: "cleanupExpiredRecords" | "recoverStuckRecords";
  rows: number;
  /** Median wall time of one call through the handler, commit included. */
  batchMs: number;
  batchesMs: number[];
  handled: number[];
  /** The statement's own execution time inside PostgreSQL (EXPLAIN ANALYZE, rolled back). */
  executionMs: number;
  scans: string[];
  plan: string;
};
export type JobScale = { rows: number; seedMs: number; runs: JobRun[] };

/** 10 % expired, 10 % stuck PROCESSING (last heartbeat an hour ago), 5 % with a retry counter (half expired), the rest live. */
async function seed(pool: pg.Pool, table: string, rows: number): Promise<void> {
  await pool.query(
    `INSERT INTO ${table} (operation, user_id, key, request_hash, status, response, token, expires_at, created_at, updated_at)
     SELECT 'POST /payments', 'u_' || (i % 1000), 'k' || i, md5(i::text),
            CASE WHEN i % 10 = 1 THEN 'PROCESSING' ELSE 'SUCCESS' END,
            CASE WHEN i % 10 = 1 THEN NULL ELSE '{"id":"pay_' || i || '","status":"captured"}' END,
            gen_random_uuid(),
            CASE WHEN i % 10 = 0 THEN now() - (i % 86400) * interval '1 second'
                 ELSE now() + interval '1 hour' + (i % 86400) * interval '1 second' END,
            now() - interval '2 hours',
            CASE WHEN i % 10 = 1 THEN now() - interval '1 hour' - (i % 3600) * interval '1 second'
                 ELSE now() - interval '2 hours' END
     FROM generate_series(1, $1::int) AS i`,
    [rows],
  );
  await pool.query(
    `INSERT INTO ${table}_retries (operation, user_id, key, retry_count, expires_at)
     SELECT 'POST /payments', 'u_' || (i % 1000), 'k' || i, 1,
            CASE WHEN i % 40 = 2 THEN now() - interval '1 minute' ELSE now() + interval '1 day' END
     FROM generate_series(2, $1::int, 20) AS i`,
    [rows],
  );
  // What autovacuum would have done on a table this size: fresh statistics for the planner.
  await pool.query(`VACUUM ANALYZE ${table}`);
  await pool.query(`VACUUM ANALYZE ${table}_retries`);
  // Flush the seed's WAL now, so no size's batches run under a checkpoint the seeding caused.
  await pool.query("CHECKPOINT");
}

async function timeBatches(call: () => Promise<number>): Promise<{ batchesMs: number[]; handled: number[] }> {
  const batchesMs: number[] = [];
  const handled: number[] = [];
  for (let i = 0; i < BATCHES; i++) {
    const started = performance.now();
    handled.push(await call());
    batchesMs.push(round(performance.now() - started, 2));
  }
  return { batchesMs, handled };
}

async function measureSize(pool: pg.Pool, rows: number): Promise<JobScale> {
  const table = await createRunTable(pool, `jobs_${rows}`);
  try {
    const seedStarted = performance.now();
    await seed(pool, table, rows);
    const seedMs = round(performance.now() - seedStarted, 0);
    const handler = new IdempotencyHandler(new PostgresStore(pool, { table }));
    const explain = new ExplainClient(pool);
    const explained = new PostgresStore(explain, { table });
    const runs: JobRun[] = [];

    await explained.cleanupExpiredRecords({ limit: BATCH_LIMIT });
    const cleanup = await timeBatches(
      async () => (await handler.cleanupExpiredRecords({ limit: BATCH_LIMIT })).deleted,
    );
    runs.push({
      job: "cleanupExpiredRecords",
      rows,
      batchMs: round(median(cleanup.batchesMs)),
      ...cleanup,
      ...planOf(explain),
    });

    await explained.recoverStuckRecords({
      olderThanMs: 5 * 60_000,
      limit: BATCH_LIMIT,
      maxRetries: 3,
      ttlMs: 86_400_000,
    });
    const recover = await timeBatches(async () => {
      const { released, poisoned } = await handler.recoverStuckRecords({ timeoutInMs: 5 * 60_000, limit: BATCH_LIMIT });
      return released + poisoned;
    });
    runs.push({
      job: "recoverStuckRecords",
      rows,
      batchMs: round(median(recover.batchesMs)),
      ...recover,
      ...planOf(explain),
    });

    for (const run of runs)
      console.log(
        `  ${String(rows).padStart(8)} rows  ${run.job.padEnd(22)} batch ${run.batchMs} ms, in PostgreSQL ${run.executionMs} ms`,
      );
    return { rows, seedMs, runs };
  } finally {
    await dropRunTable(pool, table);
  }
}

function planOf(explain: ExplainClient): { plan: string; scans: string[]; executionMs: number } {
  const plan = explain.plans.at(-1) ?? "";
  const executionMs = Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? Number.NaN);
  return { plan, scans: scanNodes(plan), executionMs };
}

export async function jobScale(): Promise<JobScale[]> {
  const pool = openPool(2);
  try {
    const sizes: JobScale[] = [];
    for (const rows of settings.jobRows) sizes.push(await measureSize(pool, rows));
    return sizes;
  } finally {
    await pool.end();
  }
}
