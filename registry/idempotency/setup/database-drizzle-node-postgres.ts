// PostgresStore on Drizzle over a pg Pool: pass the app's own database (`createIdempotency({ db })`), any schema.
import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import { Pool } from "pg";
import { drizzleClient, type DrizzleTransaction } from "../stores/clients/drizzle";
import { openPostgres, type DatabaseUse } from "./postgres-database";
import type { OpenedDatabase } from "./variants";

/** Your Drizzle database on a pg Pool, any schema (`drizzle({ client: pool, schema })`); put `typeof schema` here for a typed `tx`. */
export type Database = NodePgDatabase<Record<string, unknown>> & { $client: Pool };
/** What `handler.executeInTransaction` hands the operation: the `tx` of `db.transaction`. */
export type Transaction = DrizzleTransaction<Database>;

/** The database client the store and the maintenance lock run on; to use another client, change `Database`, this function and `bindDatabase`. */
export function connectDatabase(url = process.env.DATABASE_URL): Database {
  return drizzle({ client: new Pool({ connectionString: url }) });
}

/** The maintenance lock runs on Drizzle's own Pool, which lends one connection for the lock and its release. */
export function bindDatabase(db: Database): DatabaseUse<Transaction> {
  return { sql: drizzleClient(db), lock: db.$client, end: () => db.$client.end() };
}

/** The store and its maintenance over `db` (setup/postgres-database.ts). */
export function openDatabase(db: Database): OpenedDatabase<Transaction> {
  return openPostgres(bindDatabase(db));
}
