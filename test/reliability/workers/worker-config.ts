// The one configuration a worker process receives (as JSON in its environment) from the test that starts it.

export type WorkerConfig = {
  workerId: string;
  /** Where the idempotency store connects: PostgreSQL directly, or a fault-injecting proxy in front of it. */
  storeUrl: string;
  /** Where the side-effect table is written: always PostgreSQL directly, like an external provider. */
  effectsUrl: string;
  table: string;
  effectsTable: string;
  /** A Redis (or a proxy in front of it) for RedisCache; no cache when absent. */
  redisUrl?: string;
  handler?: {
    storeTimeoutMs?: number;
    cacheTimeoutMs?: number;
    heartbeatIntervalMs?: number;
    completionAttempts?: number;
    ttlMs?: number;
    maxRetries?: number;
  };
  pool?: { max?: number; connectionTimeoutMillis?: number };
  logLevel?: "debug" | "info" | "warn" | "error";
  /** HTTP workers only. */
  framework?: "express" | "fastify" | "hono";
  /** HTTP workers only: body limit of the framework's JSON parser, in bytes. */
  bodyLimitBytes?: number;
  /** HTTP workers only: run the two maintenance jobs in-process, as the cron stub would. */
  jobs?: { everyMs: number; recoverAfterMs: number };
  /** HTTP workers only: the share of executions that fail with an injected transient error. */
  failureRate?: number;
  /** Step workers only: the stand-in payment provider their steps call. */
  downstreamUrl?: string;
};

export const WORKER_CONFIG_ENV = "RELIABILITY_WORKER_CONFIG";

/** The first stdout line a worker prints once it can take work. */
export type ReadyLine = { ready: true; workerId: string; port?: number | undefined };

/**
 * Handler workers' IPC command to run one protected operation. `hold`: where the operation waits for
 * a `release` command: never, before its side effect (a well-behaved operation then checks its
 * abort signal), or after it (the side effect already happened).
 */
export type ExecuteCommand = {
  type: "execute";
  id: number;
  key: string;
  payload: unknown;
  hold?: "none" | "before-effect" | "after-effect";
  /** Step workers only: SIGKILL the worker after both recovery points are recorded, before the result is. */
  killAfterSteps?: boolean;
};
