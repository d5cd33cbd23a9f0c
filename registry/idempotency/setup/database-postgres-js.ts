// PostgresStore on postgres.js: pass the app's own `sql` (`createIdempotency({ db: sql })`) to share its connections.
import postgres, { type Sql, type TransactionSql } from "postgres";
import { postgresJsClient } from "../stores/clients/postgres-js";
import type { LockClient } from "../maintenance";
import type { SqlClient } from "../stores/postgres-store";
import { openPostgres, type DatabaseUse } from "./postgres-database";
import type { OpenedDatabase } from "./variants";

/** Your postgres.js client: pass the app's own (`createIdempotency({ db: sql })`) to share its connections. */
export type Database = Sql;
/** What `handler.executeInTransaction` hands the operation: the `sql` of `sql.begin`. */
export type Transaction = TransactionSql;

/** The database client the store and the maintenance lock run on; to use another client, change `Database`, this function and `bindDatabase`. */
export function connectDatabase(url = process.env.DATABASE_URL): Database {
  return url === undefined ? postgres() : postgres(url);
}

export function bindDatabase(db: Database): DatabaseUse<Transaction> {
  return { sql: postgresJsClient(db), lock: reservedLock(db), end: () => db.end() };
}

/** The maintenance lock: a session advisory lock is taken and released on one connection, so it reserves one (postgres.js has no `connect()`). */
function reservedLock(sql: Sql): LockClient {
  const on = (client: Pick<Sql, "unsafe">): SqlClient => ({
    query: async (text, params = []) => ({ rows: await client.unsafe(text, params as never[]) }),
  });
  return {
    ...on(sql),
    async connect() {
      const reserved = await sql.reserve();
      return { ...on(reserved), release: () => reserved.release() };
    },
  };
}

/** The store and its maintenance over `db` (setup/postgres-database.ts). */
export function openDatabase(db: Database): OpenedDatabase<Transaction> {
  return openPostgres(bindDatabase(db));
}
