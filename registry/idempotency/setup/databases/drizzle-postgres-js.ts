// PostgresStore on Drizzle over postgres.js: pass the app's own database (`createIdempotency({ db })`), any schema.
import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import postgres, { type Sql } from "postgres";
import { drizzleClient, type DrizzleTransaction } from "../../stores/clients/drizzle";
import { reservedLock } from "../reserved-lock";
import { openPostgres, type DatabaseUse } from "../postgres-database";
import type { OpenedDatabase } from "../variants";

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

/** The store and its maintenance over `db` (setup/postgres-database.ts). */
export function openDatabase(db: Database): OpenedDatabase<Transaction> {
  return openPostgres(bindDatabase(db));
}
