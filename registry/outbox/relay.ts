// startOutboxRelay: claims due rows, publishes them outside any transaction, marks them, backs off failures, cleans up.
import { errorSummary } from "./error-summary";
import { relayStatements } from "./relay-sql";
import { resolveRelayOptions, type OutboxMessage, type OutboxRelayOptions } from "./relay-options";
import { toSqlClient } from "./sql-client";

export type OutboxRelay = {
  /** Stops claiming, finishes the batch in hand (published and marked, or backed off), then resolves. */
  stop(): Promise<void>;
};

type ClaimedRow = {
  id: string;
  topic: string;
  key: string | null;
  payload: unknown;
  headers: Record<string, string>;
  attempts: number;
  created_at: Date | string;
};

const MAX_ERROR_LENGTH = 1000;

/**
 * Starts one relay loop. Run one per process or several: each claims rows the others do not hold.
 *
 * @example
 * const relay = startOutboxRelay({ db: pool, publish: bullmqPublisher(queue), batchSize: 100, logger, metrics });
 * process.once("SIGTERM", () => relay.stop().then(() => pool.end()));
 */
export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const config = resolveRelayOptions(options);
  const { publish, logger, metrics, listen, signal } = config;
  const db = toSqlClient(config.db);
  const sql = relayStatements(config.table);
  let stopping = false;
  let wake = () => {};
  let nextCleanup = config.cleanupIntervalMs > 0 ? Date.now() : Infinity;
  let nextSample = metrics ? Date.now() : Infinity;

  const onNotification = (notification: { channel: string }) => {
    if (notification.channel === config.table) wake();
  };

  async function relayBatch(): Promise<number> {
    const { rows } = await db.query(sql.claim, [config.batchSize, config.leaseMs]);
    const messages = (rows as ClaimedRow[]).map(toMessage);
    if (messages.length === 0) return 0;
    // Claimed more often than allowed without an outcome: each relay holding it died (or lost the database)
    // while publishing. Publishing it again may kill this relay too, so it goes dead unpublished.
    const failed: Array<{ message: OutboxMessage; error: unknown }> = messages
      .filter((message) => message.attempt > config.maxAttempts)
      .map((message) => ({
        message,
        error: new Error(
          `claimed ${message.attempt - 1} times without an outcome: each relay stopped while publishing it`,
        ),
      }));
    const toPublish = messages.filter((message) => message.attempt <= config.maxAttempts);
    const outcomes = await Promise.allSettled(toPublish.map((message) => publishWithin(message)));
    const published: OutboxMessage[] = [];
    toPublish.forEach((message, i) => {
      const outcome = outcomes[i];
      if (outcome?.status === "rejected") failed.push({ message, error: outcome.reason as unknown });
      else published.push(message);
    });
    if (published.length > 0) {
      await db.query(sql.markPublished, [published.map((message) => message.id)]);
      for (const message of published) metrics?.increment("published", { topic: message.topic });
    }
    if (failed.length > 0) await recordFailures(failed);
    return messages.length;
  }

  function publishWithin(message: OutboxMessage): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`publish did not answer within ${config.publishTimeoutMs} ms`)),
        config.publishTimeoutMs,
      );
    });
    return Promise.race([Promise.resolve().then(() => publish(message)), timeout]).finally(() => clearTimeout(timer));
  }

  async function recordFailures(failed: Array<{ message: OutboxMessage; error: unknown }>): Promise<void> {
    const { rows } = await db.query(sql.recordFailures, [
      failed.map(({ message }) => message.id),
      failed.map(({ error }) => errorSummary(error).message.slice(0, MAX_ERROR_LENGTH)),
      failed.map(({ message }) => message.attempt),
      config.maxAttempts,
      config.retryBaseMs,
      config.retryMaxMs,
    ]);
    const dead = new Set((rows as Array<{ id: string; dead: boolean }>).filter((row) => row.dead).map((row) => row.id));
    for (const { message, error } of failed) {
      metrics?.increment("failed", { topic: message.topic });
      const fields = {
        messageId: message.id,
        topic: message.topic,
        attempt: message.attempt,
        err: errorSummary(error),
      };
      if (!dead.has(message.id)) {
        logger.warn(fields, "outbox publish failed; will retry");
        continue;
      }
      // The row became dead in the statement above, once: only the relay whose update did it gets here.
      metrics?.increment("dead", { topic: message.topic });
      logger.error(fields, "outbox message is dead: out of attempts");
      try {
        await config.onDead?.(message, error);
      } catch (onDeadError) {
        logger.error({ messageId: message.id, err: errorSummary(onDeadError) }, "outbox onDead threw");
      }
    }
  }

  async function housekeeping(): Promise<void> {
    const now = Date.now();
    if (now >= nextCleanup) {
      const { rows } = await db.query(sql.cleanup, [config.retentionMs, config.cleanupBatchSize]);
      const deleted = (rows[0] as { deleted: number }).deleted;
      // A full batch means more is waiting: the next turn takes it, between claims.
      nextCleanup = deleted >= config.cleanupBatchSize ? now : now + config.cleanupIntervalMs;
      if (deleted > 0) logger.debug?.({ deleted }, "outbox cleanup deleted published rows");
    }
    if (metrics && now >= nextSample) {
      nextSample = now + config.metricsIntervalMs;
      const row = (await db.query(sql.stats, [])).rows[0] as { backlog: number; oldest_age_seconds: number };
      metrics.set("backlog", Number(row.backlog));
      metrics.set("oldestAge", Number(row.oldest_age_seconds));
    }
  }

  async function loop(): Promise<void> {
    if (listen) startListening(listen);
    while (!stopping) {
      let claimed = 0;
      try {
        claimed = await relayBatch();
        await housekeeping();
      } catch (error) {
        // The database is away or a statement failed: claimed rows come back when their lease ends.
        logger.error({ err: errorSummary(error) }, "outbox relay round failed; retrying after pollMs");
        claimed = 0;
      }
      if (claimed < config.batchSize && !stopping) await sleep(config.pollMs);
    }
    if (listen) {
      listen.removeListener("notification", onNotification);
      // Not awaited either: stop() never waits on the listening connection.
      Promise.resolve(listen.query(`UNLISTEN "${config.table}"`)).catch(() => {});
    }
  }

  /**
   * Not awaited: a LISTEN that fails or never answers (a pg Client not yet connected queues it) costs
   * the wake-up, not the relay, which polls as it would without `listen`.
   */
  function startListening(client: NonNullable<typeof listen>): void {
    client.on("notification", onNotification);
    Promise.resolve(client.query(`LISTEN "${config.table}"`)).catch((error: unknown) => {
      logger.error({ err: errorSummary(error) }, "outbox relay could not LISTEN; polling every pollMs instead");
    });
  }

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = () => {};
        resolve();
      }
      wake = done;
    });
  }

  const running = loop();
  const onAbort = () => void stop();
  function stop(): Promise<void> {
    stopping = true;
    // An app-wide signal outlives the relay: leave nothing of it behind.
    signal?.removeEventListener("abort", onAbort);
    wake();
    return running;
  }
  if (signal?.aborted) void stop();
  else signal?.addEventListener("abort", onAbort, { once: true });
  return { stop };
}

function toMessage(row: ClaimedRow): OutboxMessage {
  return {
    id: row.id,
    topic: row.topic,
    key: row.key,
    payload: row.payload,
    headers: row.headers ?? {},
    attempt: row.attempts,
    createdAt: new Date(row.created_at),
  };
}
