// MySqlStore on Drizzle over mysql2 (drizzle-orm/mysql2): pass the app's own database (`createIdempotency({ db })`), any schema.
// MySQL 8 or MariaDB 10.6+. `npx blocks migrate` writes the tables' SQL for your migrations.
import { drizzle, type MySql2Database } from "drizzle-orm/mysql2";
import type { Pool as CallbackPool } from "mysql2";
import { createPool, type Pool } from "mysql2/promise";
import type { DrizzleTransaction } from "../stores/clients/drizzle-guard";
import { drizzleMySqlClient } from "../stores/clients/drizzle-mysql";
import { MySqlStore } from "../stores/mysql-store";
import { recoveryJobs } from "./recovery-jobs";
import { IDEMPOTENCY_TABLE } from "./table";
import type { OpenedDatabase } from "./variants";

/** Your Drizzle database on a mysql2 pool, any schema (`drizzle({ client: pool, schema, mode })`); put `typeof schema` here for a typed `tx`. */
export type Database = MySql2Database<Record<string, unknown>> & { $client: Pool | CallbackPool };
/** What `handler.executeInTransaction` hands the operation: the `tx` of `db.transaction`. */
export type Transaction = DrizzleTransaction<Database>;

/** Drizzle on a mysql2 pool of MYSQL_URL; pass the app's own database (`createIdempotency({ db })`) to share its connections. */
export function connectDatabase(url = process.env.MYSQL_URL): Database {
  if (!url)
    throw new Error(
      "idempotency/setup/database.ts: set MYSQL_URL (mysql://user:password@host:3306/database), or pass `db`.",
    );
  return drizzle({ client: createPool(url) });
}

/** Expired rows stay until deleted: an hourly cleanup beside the recovery (no lock needed: bounded DELETEs). */
export function openDatabase(db: Database): OpenedDatabase<Transaction> {
  return {
    store: new MySqlStore(drizzleMySqlClient(db), { table: IDEMPOTENCY_TABLE }),
    jobs: (handler, logger) => recoveryJobs(handler, logger, 300_000, { cleanupEveryMs: 3_600_000 }),
    end: () => endPool(db.$client),
  };
}

/** Closes Drizzle's pool, whichever mysql2 API built it (`drizzle(url)` makes a callback pool, `mysql2/promise` a promise one). */
function endPool(pool: Pool | CallbackPool): Promise<void> {
  return "promise" in pool ? pool.promise().end() : pool.end();
}
