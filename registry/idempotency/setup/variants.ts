// What each variant of the wiring exports (one per database client, cache, logger, metrics sink): `add` copies the
// chosen one to a fixed name (setup/database.ts, cache.ts, app-logger.ts, metrics.ts), so setup/index.ts is one fixed file.
import type { IdempotencyHandler } from "../handler";
import type { BlockLogger as IdempotencyLogger } from "../logger";
import type { IdempotencyMetrics } from "../metrics";
import type { IdempotencyCache, IdempotencyStore, TransactionalStore } from "../types";
import type { MaintenanceJobs } from "./lifecycle";

/** The store over the app's database client, its maintenance jobs, and how the client closes. */
export type OpenedDatabase<Tx> = {
  store: IdempotencyStore | TransactionalStore<Tx>;
  jobs(handler: IdempotencyHandler<Tx>, logger: IdempotencyLogger): MaintenanceJobs;
  end(): Promise<void>;
};

/**
 * setup/database.ts: `Database` (the client the app may pass in), `Transaction` (what `executeInTransaction`
 * hands the operation), and these two functions. To use a client no variant covers, write one that keeps this shape.
 */
export type DatabaseVariant<Db, Tx> = {
  connectDatabase(): Db;
  openDatabase(db: Db): OpenedDatabase<Tx>;
};

/** setup/cache.ts: the cache in front of the store (Redis), or none (`CacheClient` is then `null`). */
export type CacheVariant<Client> = {
  connectCache(): Client;
  openCache(client: Client): { cache: IdempotencyCache | undefined; end(): Promise<void> };
};

/** setup/app-logger.ts and setup/metrics.ts: where the block's log lines and counters go. */
export type ObservabilityVariant = { logger: IdempotencyLogger } | { metrics: IdempotencyMetrics };
