// startOutboxRelay's options: what each means, its default, and the one check that refuses a bad value at start.
import { OUTBOX_INVALID_OPTIONS, OutboxError } from "./errors";
import { consoleLogger, type BlockLogger as OutboxLogger } from "./logger";
import type { OutboxMetrics } from "./metrics";
import { checkTableName, DEFAULT_OUTBOX_TABLE } from "./postgres-schema";
import type { OutboxDatabase } from "./sql-client";

/** A message as the relay hands it to `publish`. */
export type OutboxMessage = {
  /** The message id: send it as the broker's message id, so the consumer's inbox dedupes a second delivery. */
  id: string;
  topic: string;
  key: string | null;
  payload: unknown;
  headers: Record<string, string>;
  /** 1 on the first try. */
  attempt: number;
  createdAt: Date;
};

/** Sends one message to the broker; resolves once the broker has it (a publisher confirm, a stored job). */
export type Publish = (message: OutboxMessage) => Promise<void>;

/** Called once for a message that ran out of attempts, with the last error. */
export type OnDead = (message: OutboxMessage, error: unknown) => void | Promise<void>;

/** A dedicated connection for LISTEN, such as a connected `pg.Client` (not a Pool: it lends a new connection per query). */
export type ListenClient = {
  query(text: string): PromiseLike<unknown>;
  on(event: "notification", listener: (notification: { channel: string }) => void): unknown;
  removeListener(event: "notification", listener: (notification: { channel: string }) => void): unknown;
};

export type OutboxRelayOptions = {
  /** Where the outbox table lives: a pg Pool, PGlite, postgres.js `sql`, Prisma, Kysely or Drizzle. */
  db: OutboxDatabase;
  publish: Publish;
  /** @default "outbox_messages" */
  table?: string | undefined;
  /** Rows claimed and published per round trip. @default 100 */
  batchSize?: number | undefined;
  /** How long to sleep when nothing is due (a notification through `listen` ends it early). @default 1000 */
  pollMs?: number | undefined;
  /** Publish attempts before a message is dead. @default 10 */
  maxAttempts?: number | undefined;
  /** The first retry's delay; each further one doubles, with jitter. @default 1000 */
  retryBaseMs?: number | undefined;
  /** The longest delay between retries. @default 300000 (5 minutes) */
  retryMaxMs?: number | undefined;
  /**
   * How long a claimed row stays out of other relays' reach. Must exceed `publishTimeoutMs`: a
   * publish still running when the lease ends is the one normal way to a second publish. @default 60000
   */
  leaseMs?: number | undefined;
  /** A publish that has not answered by then counts as failed (it may still arrive). @default 15000 */
  publishTimeoutMs?: number | undefined;
  onDead?: OnDead | undefined;
  /** Aborting it stops the relay as `stop()` does. */
  signal?: AbortSignal | undefined;
  /** PostgreSQL LISTEN on the table's channel, for `addToOutbox(tx, message, { notify: true })`. */
  listen?: ListenClient | undefined;
  /** Published rows are deleted this long after publishing. @default 604800000 (7 days) */
  retentionMs?: number | undefined;
  /** How often the relay runs one cleanup batch (more while batches come back full); 0 turns cleanup off. @default 60000 */
  cleanupIntervalMs?: number | undefined;
  /** Rows deleted per cleanup statement. @default 1000 */
  cleanupBatchSize?: number | undefined;
  /** How often the backlog gauges are sampled (one count over pending rows), when `metrics` is given. @default 15000 */
  metricsIntervalMs?: number | undefined;
  /** @default consoleLogger (warnings and errors as JSON lines on stderr) */
  logger?: OutboxLogger | undefined;
  metrics?: OutboxMetrics | undefined;
};

type Optional = "onDead" | "signal" | "listen" | "metrics";

export type ResolvedRelayOptions = {
  [K in Exclude<keyof OutboxRelayOptions, Optional>]-?: NonNullable<OutboxRelayOptions[K]>;
} & {
  [K in Optional]: OutboxRelayOptions[K];
};

/** Defaults filled in and every value checked once, at start. */
export function resolveRelayOptions(options: OutboxRelayOptions): ResolvedRelayOptions {
  const fail = (problem: string): never => {
    throw new OutboxError(OUTBOX_INVALID_OPTIONS, `startOutboxRelay: ${problem}.`);
  };
  if (typeof options?.publish !== "function") fail('"publish" must be a function (message) => Promise<void>');
  if (options.onDead !== undefined && typeof options.onDead !== "function")
    fail('"onDead" must be a function when given');
  const resolved: ResolvedRelayOptions = {
    db: options.db,
    publish: options.publish,
    table: checkTableName(options.table ?? DEFAULT_OUTBOX_TABLE),
    batchSize: options.batchSize ?? 100,
    pollMs: options.pollMs ?? 1000,
    maxAttempts: options.maxAttempts ?? 10,
    retryBaseMs: options.retryBaseMs ?? 1000,
    retryMaxMs: options.retryMaxMs ?? 300_000,
    leaseMs: options.leaseMs ?? 60_000,
    publishTimeoutMs: options.publishTimeoutMs ?? 15_000,
    onDead: options.onDead,
    signal: options.signal,
    listen: options.listen,
    retentionMs: options.retentionMs ?? 7 * 24 * 3_600_000,
    cleanupIntervalMs: options.cleanupIntervalMs ?? 60_000,
    cleanupBatchSize: options.cleanupBatchSize ?? 1000,
    metricsIntervalMs: options.metricsIntervalMs ?? 15_000,
    logger: options.logger ?? consoleLogger,
    metrics: options.metrics,
  };
  const integers = ["batchSize", "maxAttempts", "cleanupBatchSize"] as const;
  for (const name of integers)
    if (!Number.isInteger(resolved[name]) || resolved[name] < 1)
      fail(`"${name}" must be an integer >= 1 (got ${String(resolved[name])})`);
  const durations = [
    "pollMs",
    "retryBaseMs",
    "retryMaxMs",
    "leaseMs",
    "publishTimeoutMs",
    "retentionMs",
    "cleanupIntervalMs",
    "metricsIntervalMs",
  ] as const;
  for (const name of durations)
    if (!Number.isFinite(resolved[name]) || resolved[name] < 0)
      fail(`"${name}" must be a number of milliseconds >= 0 (got ${String(resolved[name])})`);
  if (resolved.publishTimeoutMs >= resolved.leaseMs)
    fail(
      `"publishTimeoutMs" (${resolved.publishTimeoutMs}) must be less than "leaseMs" (${resolved.leaseMs}), or a slow publish outlives its lease and another relay publishes the row again`,
    );
  return resolved;
}
