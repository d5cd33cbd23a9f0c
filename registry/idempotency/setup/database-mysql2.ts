// MySqlStore on a mysql2 pool: MySQL 8 or MariaDB 10.6+. `npx blocks migrate` writes the tables' SQL for your migrations.
import { createPool, type Pool } from "mysql2/promise";
import { mysql2Client, type MySqlTransaction } from "../stores/clients/mysql2";
import { MySqlStore } from "../stores/mysql-store";
import { recoveryJobs } from "./recovery-jobs";
import { IDEMPOTENCY_TABLE } from "./table";
import type { OpenedDatabase } from "./variants";

/** Where the records live: a mysql2 pool. */
export type Database = Pool;
/** What `handler.executeInTransaction` hands the operation: the pool connection's `query` and `execute`, inside the transaction. */
export type Transaction = MySqlTransaction;

/** A mysql2 pool; pass the app's own (`createIdempotency({ db: pool })`) to share its connections. */
export function connectDatabase(url = process.env.MYSQL_URL): Database {
  if (!url)
    throw new Error(
      "idempotency/setup/database.ts: set MYSQL_URL (mysql://user:password@host:3306/database), or pass `db`.",
    );
  return createPool(url);
}

/** Expired rows stay until deleted: an hourly cleanup beside the recovery (no lock needed: bounded DELETEs). */
export function openDatabase(db: Database): OpenedDatabase<Transaction> {
  return {
    store: new MySqlStore(mysql2Client(db), { table: IDEMPOTENCY_TABLE }),
    jobs: (handler, logger) => recoveryJobs(handler, logger, 300_000, { cleanupEveryMs: 3_600_000 }),
    end: () => db.end(),
  };
}
