// The wiring's one composition: the handler over a database variant, the cache, logger and metrics, its jobs and close order.
import { IdempotencyHandler } from "../handler";
import { logger } from "./app-logger";
import { connectCache, openCache, type CacheClient } from "./cache";
import { idempotencyLifecycle, type Lifecycle } from "./lifecycle";
import { metrics } from "./metrics";
import type { DatabaseVariant } from "./variants";

/** The handler, and its run and stop (the maintenance jobs, signals, the close order: setup/lifecycle.ts). */
export type IdempotencySetup<Tx> = Lifecycle & { handler: IdempotencyHandler<Tx> };

/**
 * The app's own clients, to share their connections; left out, the setup opens its own. `close()` ends only
 * the clients it opened: the app's stay open for the app to close. `redis: null` runs without the cache.
 */
export type IdempotencyClients<Db> = { db?: Db; redis?: CacheClient };

/**
 * @example
 * import * as database from "./database";
 * composeIdempotency(database, { redis: null }).handler;
 */
export function composeIdempotency<Db, Tx>(
  database: DatabaseVariant<Db, Tx>,
  clients: IdempotencyClients<Db> = {},
): IdempotencySetup<Tx> {
  const opened = database.openDatabase(clients.db ?? database.connectDatabase());
  const cache = openCache(clients.redis === undefined ? connectCache() : clients.redis);
  const handler = new IdempotencyHandler<Tx>(opened.store, cache.cache, { logger, metrics });
  const jobs = opened.jobs(handler, logger);
  // Only the clients opened here: one the app passed in serves the app's other work, and the app closes it.
  // The cache first: requests still running after close() fall back to the store, never the other way round.
  const close = async () => {
    if (clients.redis === undefined) await cache.end();
    if (clients.db === undefined) await opened.end();
  };
  return { handler, ...idempotencyLifecycle({ jobs, logger, close }) };
}
