// PostgresStore on Kysely (PostgreSQL dialect): pass the app's own instance (`createIdempotency({ db })`) to share its pool.
import { Kysely, PostgresDialect, type Transaction as KyselyTransaction } from "kysely";
import { Pool } from "pg";
import type { LockClient } from "../maintenance";
import { kyselyClient } from "../stores/clients/kysely";
import { openPostgres, type DatabaseUse } from "./postgres-database";
import type { OpenedDatabase } from "./variants";

/** Kysely's `DB` type: `any` takes the app's instance whatever its tables; put your own `DB` here for typed queries on `trx`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- until your DB type replaces it: Kysely<DB> is assignable to nothing narrower
export type Tables = any;
/** Your Kysely instance (PostgreSQL dialect): pass the app's own (`createIdempotency({ db })`) to share its pool. */
export type Database = Kysely<Tables>;
/** What `handler.executeInTransaction` hands the operation: the `trx` of `db.transaction().execute`. */
export type Transaction = KyselyTransaction<Tables>;

/** The database client the store and the maintenance lock run on; to use another client, change `Database`, this function and `bindDatabase`. */
export function connectDatabase(url = process.env.DATABASE_URL): Database {
  return new Kysely<Tables>({ dialect: new PostgresDialect({ pool: new Pool({ connectionString: url }) }) });
}

export function bindDatabase(db: Database): DatabaseUse<Transaction> {
  return { sql: kyselyClient(db), lock: heldConnectionLock(db), end: () => db.destroy() };
}

/** The maintenance lock: a session advisory lock is taken and released on one connection, which Kysely lends while `connection().execute` runs. */
function heldConnectionLock(db: Database): LockClient {
  return {
    ...kyselyClient(db),
    connect: () =>
      new Promise((lent, failed) => {
        db.connection()
          .execute((connection) => new Promise<void>((release) => lent({ ...kyselyClient(connection), release })))
          .catch(failed);
      }),
  };
}

/** The store and its maintenance over `db` (setup/postgres-database.ts). */
export function openDatabase(db: Database): OpenedDatabase<Transaction> {
  return openPostgres(bindDatabase(db));
}
