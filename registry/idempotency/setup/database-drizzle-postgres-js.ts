// PostgresStore on Drizzle over postgres.js: pass the app's own database (`createIdempotency({ db })`), any schema.
import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import postgres, { type Sql } from "postgres";
import { drizzleClient, type DrizzleTransaction } from "../stores/clients/drizzle";
import type { LockClient } from "../maintenance";
import type { SqlClient } from "../stores/postgres-store";
import { openPostgres, type DatabaseUse } from "./postgres-database";
import type { OpenedDatabase } from "./variants";

/** Your Drizzle database on postgres.js, any schema (`drizzle({ client: sql, schema })`); put `typeof schema` here for a typed `tx`. */
export type Database = PostgresJsDatabase<Record<string, unknown>> & { $client: Sql };
/** What `handler.executeInTransaction` hands the operation: the `tx` of `db.transaction`. */
export type Transaction = DrizzleTransaction<Database>;

/** The database client the store and the maintenance lock run on; to use another client, change `Database`, this function and `bindDatabase`. */
export function connectDatabase(url = process.env.DATABASE_URL): Database {
  return drizzle({ client: url === undefined ? postgres() : postgres(url) });
}

export function bindDatabase(db: Database): DatabaseUse<Transaction> {
  return { sql: drizzleClient(db), lock: reservedLock(db.$client), end: () => db.$client.end() };
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
