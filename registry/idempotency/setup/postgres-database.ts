// PostgresStore over any client's binding: the store's SQL, the maintenance lock (a session advisory lock) and the close.
import type { LockClient } from "../maintenance";
import { PostgresStore, type SqlClient, type TransactionalSqlClient } from "../stores/postgres-store";
import { lockedJobs } from "./locked-jobs";
import { IDEMPOTENCY_TABLE } from "./table";
import type { OpenedDatabase } from "./variants";

/** What the setup runs on: the store's SQL, the maintenance lock (a session advisory lock, held on one connection) and the close. */
export type DatabaseUse<Tx> = { sql: SqlClient | TransactionalSqlClient<Tx>; lock: LockClient; end(): Promise<void> };

/**
 * @example
 * openPostgres(bindDatabase(db)); // PostgresStore on the bound SQL, maintenance under the advisory lock
 */
export function openPostgres<Tx>(use: DatabaseUse<Tx>): OpenedDatabase<Tx> {
  return {
    store: new PostgresStore<Tx>(use.sql, { table: IDEMPOTENCY_TABLE }),
    jobs: (handler, logger) => lockedJobs(handler, use.lock, logger),
    end: () => use.end(),
  };
}
