// SqliteStore on libSQL: a local file (`file:...`) or Turso shared by every app server.
import { createClient, type Client } from "@libsql/client";
import { libsqlClient, type LibsqlTransaction } from "../stores/clients/libsql";
import { SqliteStore } from "../stores/sqlite-store";
import { recoveryJobs } from "./recovery-jobs";
import { IDEMPOTENCY_TABLE } from "./table";
import type { OpenedDatabase } from "./variants";

/** Where the records live: a libSQL client. */
export type Database = Client;
/** What `handler.executeInTransaction` hands the operation: the write transaction's `execute` and `batch`. */
export type Transaction = LibsqlTransaction;

/** LIBSQL_URL (`libsql://...` for Turso, with LIBSQL_AUTH_TOKEN), else a file beside the app. Not `:memory:`: its transactions need a file. */
export function connectDatabase(url = process.env.LIBSQL_URL ?? "file:./data/idempotency.db"): Database {
  const authToken = process.env.LIBSQL_AUTH_TOKEN;
  return createClient(authToken ? { url, authToken } : { url });
}

/** Expired rows stay until deleted: an hourly cleanup beside the recovery (no lock needed: bounded DELETEs). */
export function openDatabase(db: Database): OpenedDatabase<Transaction> {
  return {
    store: new SqliteStore(libsqlClient(db), { table: IDEMPOTENCY_TABLE }),
    jobs: (handler, logger) => recoveryJobs(handler, logger, 300_000, { cleanupEveryMs: 3_600_000 }),
    end: () => {
      db.close();
      return Promise.resolve();
    },
  };
}
