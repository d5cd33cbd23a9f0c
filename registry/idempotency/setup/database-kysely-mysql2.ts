// MySqlStore on Kysely (MysqlDialect over mysql2): pass the app's own instance (`createIdempotency({ db })`) to share its pool.
// MySQL 8 or MariaDB 10.6+. `npx blocks migrate` writes the tables' SQL for your migrations.
import { Kysely, MysqlDialect, type Transaction as KyselyTransaction } from "kysely";
import { createPool } from "mysql2";
import { kyselyMySqlClient } from "../stores/clients/kysely-mysql";
import { MySqlStore } from "../stores/mysql-store";
import { recoveryJobs } from "./recovery-jobs";
import { IDEMPOTENCY_TABLE } from "./table";
import type { OpenedDatabase } from "./variants";

/** Kysely's `DB` type: `any` takes the app's instance whatever its tables; put your own `DB` here for typed queries on `trx`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- until your DB type replaces it: Kysely<DB> is assignable to nothing narrower
export type Tables = any;
/** Your Kysely instance (MysqlDialect over a mysql2 pool): pass the app's own (`createIdempotency({ db })`) to share its pool. */
export type Database = Kysely<Tables>;
/** What `handler.executeInTransaction` hands the operation: the `trx` of `db.transaction().execute`. */
export type Transaction = KyselyTransaction<Tables>;

/** Kysely on a mysql2 pool of MYSQL_URL (MysqlDialect takes mysql2's callback pool, from "mysql2"). */
export function connectDatabase(url = process.env.MYSQL_URL): Database {
  if (!url)
    throw new Error(
      "idempotency/setup/database.ts: set MYSQL_URL (mysql://user:password@host:3306/database), or pass `db`.",
    );
  return new Kysely<Tables>({ dialect: new MysqlDialect({ pool: createPool(url) }) });
}

/** Expired rows stay until deleted: an hourly cleanup beside the recovery (no lock needed: bounded DELETEs). */
export function openDatabase(db: Database): OpenedDatabase<Transaction> {
  return {
    store: new MySqlStore(kyselyMySqlClient(db), { table: IDEMPOTENCY_TABLE }),
    jobs: (handler, logger) => recoveryJobs(handler, logger, 300_000, { cleanupEveryMs: 3_600_000 }),
    end: () => db.destroy(),
  };
}
