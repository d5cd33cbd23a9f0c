// PostgresStore on a TypeORM DataSource (postgres driver): pass the app's own, initialized, to share its pool.
import { DataSource, type EntityManager } from "typeorm";
import type { LockClient } from "../maintenance";
import { typeormClient } from "../stores/clients/typeorm";
import type { SqlClient, TransactionalSqlClient } from "../stores/postgres-store";
import { openPostgres, type DatabaseUse } from "./postgres-database";
import type { OpenedDatabase } from "./variants";

/** Your TypeORM DataSource (postgres driver): pass the app's own, initialized (`createIdempotency({ db: dataSource })`), to share its pool. */
export type Database = DataSource;
/** What `handler.executeInTransaction` hands the operation: the transaction's EntityManager. */
export type Transaction = EntityManager;

/** TypeORM connects in `initialize()`: the store's statements on a DataSource opened here wait for it. */
const initializing = new WeakMap<DataSource, Promise<unknown>>();

/** The database client the store and the maintenance lock run on; to use another client, change `Database`, this function and `bindDatabase`. */
export function connectDatabase(url = process.env.DATABASE_URL): Database {
  const dataSource = new DataSource({ type: "postgres", ...(url === undefined ? {} : { url }) });
  const ready = dataSource.initialize();
  ready.catch(() => {}); // A failed start surfaces on the first statement (STORE_UNAVAILABLE, logged).
  initializing.set(dataSource, ready);
  return dataSource;
}

export function bindDatabase(db: Database): DatabaseUse<Transaction> {
  const client = typeormClient(db);
  const ready = async () => {
    await initializing.get(db);
  };
  const sql: TransactionalSqlClient<Transaction> = {
    query: async (text, params) => {
      await ready();
      return client.query(text, params);
    },
    transaction: async (work) => {
      await ready();
      return client.transaction(work);
    },
  };
  return { sql, lock: runnerLock(db, sql, ready), end: () => db.destroy() };
}

/** The maintenance lock: a session advisory lock is taken and released on one connection, which a QueryRunner holds until released. */
function runnerLock(db: Database, sql: SqlClient, ready: () => Promise<void>): LockClient {
  return {
    query: (text, params) => sql.query(text, params),
    async connect() {
      await ready();
      const runner = db.createQueryRunner();
      return {
        query: async (text, params) => ({ rows: (await runner.query(text, params, true)).records }),
        release: () => {
          void runner.release();
        },
      };
    },
  };
}

/** The store and its maintenance over `db` (setup/postgres-database.ts). */
export function openDatabase(db: Database): OpenedDatabase<Transaction> {
  return openPostgres(bindDatabase(db));
}
