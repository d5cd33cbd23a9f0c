// What every worker process builds from its config: pools, store, cache, handler, JSON logs and counters.
import { Redis } from "ioredis";
import pg from "pg";
import { IdempotencyHandler } from "../../../registry/idempotency/handler";
import type { BlockLogger as IdempotencyLogger } from "../../../registry/idempotency/logger";
import type { IdempotencyMetrics } from "../../../registry/idempotency/metrics";
import { RedisCache } from "../../../registry/idempotency/caches/redis-cache";
import { PostgresStore } from "../../../registry/idempotency/stores/postgres-store";
import { MySqlStore } from "../../../registry/idempotency/stores/mysql-store";
import type { IdempotencyStore } from "../../../registry/idempotency/types";
import { WORKER_CONFIG_ENV, type ReadyLine, type WorkerConfig } from "./worker-config";

const LEVELS = ["debug", "info", "warn", "error"] as const;
type Level = (typeof LEVELS)[number];

export type WorkerRuntime = Awaited<ReturnType<typeof startRuntime>>;

export function readConfig(): WorkerConfig {
  const raw = process.env[WORKER_CONFIG_ENV];
  if (!raw)
    throw new Error(`${WORKER_CONFIG_ENV} is not set: workers are started by test/reliability/support/processes.ts`);
  return JSON.parse(raw) as WorkerConfig;
}

export async function startRuntime(config: WorkerConfig = readConfig()) {
  const logger = jsonLogger(config.logLevel ?? "info", config.workerId);
  const counters: Record<string, number> = {};
  const metrics: IdempotencyMetrics = {
    increment: (id, _labels, value = 1) => void (counters[id] = (counters[id] ?? 0) + value),
    observe() {},
  };

  const storePool = new pg.Pool({
    connectionString: config.storeUrl,
    max: config.pool?.max ?? 10,
    connectionTimeoutMillis: config.pool?.connectionTimeoutMillis ?? 2_000,
  });
  // What any production app does: an idle client's broken connection is logged, not fatal.
  storePool.on("error", (err) => logger.warn({ status: "POOL_ERROR", err }, "store pool: idle client error"));
  const effectsPool = new pg.Pool({ connectionString: config.effectsUrl, max: 10 });
  effectsPool.on("error", (err) => logger.warn({ status: "POOL_ERROR", err }, "effects pool: idle client error"));

  let redis: Redis | undefined;
  if (config.redisUrl) {
    // As the RedisCache docs configure it: give up on a command after one reconnection attempt.
    redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1 });
    redis.on("error", (err) => logger.debug?.({ status: "REDIS_ERROR", err }, "redis: connection error"));
  }

  // A mysql:// storeUrl runs the same worker on MySqlStore (MariaDB / MySQL); the effects stay on PostgreSQL.
  let closeMySql = async () => {};
  let store: IdempotencyStore = new PostgresStore(storePool, { table: config.table });
  if (config.storeUrl.startsWith("mysql://")) {
    const { createPool } = await import("mysql2/promise");
    const mysqlPool = createPool({ uri: config.storeUrl, connectionLimit: config.pool?.max ?? 10 });
    store = new MySqlStore(mysqlPool, { table: config.table });
    closeMySql = () => mysqlPool.end();
  }
  const handler = new IdempotencyHandler(store, redis && new RedisCache(redis, { prefix: `${config.table}:` }), {
    ...config.handler,
    logger,
    metrics,
  });

  return {
    config,
    handler,
    logger,
    counters,
    storePool,
    /** The side effect every protected operation performs: one row per real execution. */
    async recordExecution(key: string, userId = "u_1"): Promise<number> {
      const { rows } = await effectsPool.query<{ id: string }>(
        `INSERT INTO ${config.effectsTable} (key, user_id, worker) VALUES ($1, $2, $3) RETURNING id`,
        [key, userId, config.workerId],
      );
      return Number(rows[0]?.id);
    },
    /** The block's counters and the heap, after a full GC when asked (the process runs with --expose-gc). */
    stats(collect = false) {
      if (collect) globalThis.gc?.();
      return { counters, heapUsed: process.memoryUsage().heapUsed };
    },
    announceReady(port?: number): void {
      const line: ReadyLine = { ready: true, workerId: config.workerId, port };
      process.stdout.write(`${JSON.stringify(line)}\n`);
    },
    async close(): Promise<void> {
      redis?.disconnect();
      await Promise.allSettled([storePool.end(), effectsPool.end(), closeMySql()]);
    },
  };
}

/** pino-shaped: one JSON line per call on stdout, which the launcher parses for assertions. */
function jsonLogger(minimum: Level, workerId: string): IdempotencyLogger {
  const write = (level: Level) => (obj: Record<string, unknown>, msg: string) => {
    if (LEVELS.indexOf(level) < LEVELS.indexOf(minimum)) return;
    const { err, ...fields } = obj;
    const line = { level, msg, workerId, ...fields, ...(err === undefined ? {} : { err: describeError(err) }) };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  };
  return { debug: write("debug"), info: write("info"), warn: write("warn"), error: write("error") };
}

function describeError(err: unknown): unknown {
  if (!(err instanceof Error)) return String(err);
  return { name: err.name, message: err.message, code: (err as { code?: unknown }).code };
}
