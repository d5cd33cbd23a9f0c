// The wiring of this app: `createIdempotency()` over the database, cache, logger and metrics `add` chose (the files beside
// this one). Block code, reached by `blocks update`: the app's own src/idempotency-setup.ts re-exports it.
import { composeIdempotency, type IdempotencyClients, type IdempotencySetup as Setup } from "./compose";
import * as database from "./database";

export * from "./database";
export * from "./metrics";
export * from "./metrics-route";
export * from "./cache";
export type { IdempotencyClients } from "./compose";

/** The handler over this app's database, and its run and stop (setup/lifecycle.ts). */
export type IdempotencySetup = Setup<database.Transaction>;

/**
 * @example
 * const idempotency = createIdempotency();
 * idempotency.startMaintenance();
 * app.post("/payments", idempotent(idempotency.handler, { getUserId, requireKey: true, run }));
 * // An app that drains on SIGTERM closes the clients after its last request:
 * process.once("SIGTERM", () => server.close(() => void idempotency.close()));
 */
export function createIdempotency(clients: IdempotencyClients<database.Database> = {}): IdempotencySetup {
  return composeIdempotency(database, clients);
}
