// PostgresStore on Knex (pg client): pass the app's own instance (`createIdempotency({ db })`) to share its pool.
import knex, { type Knex } from "knex";
import type { LockClient } from "../maintenance";
import { knexClient } from "../stores/clients/knex";
import type { SqlClient } from "../stores/postgres-store";
import { openPostgres, type DatabaseUse } from "./postgres-database";
import type { OpenedDatabase } from "./variants";

/** Your Knex instance (pg client): pass the app's own (`createIdempotency({ db })`) to share its pool. */
export type Database = Knex;
/** What `handler.executeInTransaction` hands the operation: the `trx` of `knex.transaction`. */
export type Transaction = Knex.Transaction;

/** The database client the store and the maintenance lock run on; to use another client, change `Database`, this function and `bindDatabase`. */
export function connectDatabase(url = process.env.DATABASE_URL): Database {
  return knex({ client: "pg", ...(url === undefined ? {} : { connection: url }) });
}

export function bindDatabase(db: Database): DatabaseUse<Transaction> {
  return { sql: knexClient(db), lock: connectionLock(db), end: () => db.destroy() };
}

/** What the lock uses of Knex's client, which Knex types `any`: its pool lends one of its node-postgres connections, and takes it back. */
type KnexPool = { acquireConnection(): Promise<SqlClient>; releaseConnection(connection: SqlClient): Promise<void> };

/** The maintenance lock: a session advisory lock is taken and released on one connection, which Knex's pool lends. */
function connectionLock(db: Database): LockClient {
  const pool = db.client as KnexPool;
  return {
    query: (text, params) => knexClient(db).query(text, params),
    async connect() {
      const connection = await pool.acquireConnection();
      return {
        query: (text, params) => connection.query(text, params),
        release: () => {
          void pool.releaseConnection(connection);
        },
      };
    },
  };
}

/** The store and its maintenance over `db` (setup/postgres-database.ts). */
export function openDatabase(db: Database): OpenedDatabase<Transaction> {
  return openPostgres(bindDatabase(db));
}
