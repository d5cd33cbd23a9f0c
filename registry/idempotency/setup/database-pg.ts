// PostgresStore on node-postgres: a pg Pool (or anything with `query` and `end`: the test passes PGlite).
import { Pool } from "pg";
import type { LockClient } from "../maintenance";
import { pgClient, type PgTransaction } from "../stores/clients/pg";
import { openPostgres, type DatabaseUse } from "./postgres-database";
import type { OpenedDatabase } from "./variants";

/** Your database client: a pg Pool, or anything with `query` and `end` (the test passes PGlite). */
export type Database = LockClient & { end(): Promise<void> };
/** What `handler.executeInTransaction` hands the operation: the pool connection's `query`, inside BEGIN ... COMMIT (no `release`). */
export type Transaction = PgTransaction;

/** The database client the store and the maintenance lock run on; to use another client, change `Database`, this function and `bindDatabase`. */
export function connectDatabase(url = process.env.DATABASE_URL): Database {
  return new Pool({ connectionString: url });
}

/** On a Pool the store also runs transactions (`executeInTransaction`); on another client, `execute` only. */
export function bindDatabase(db: Database): DatabaseUse<Transaction> {
  return { sql: db instanceof Pool ? pgClient(db) : db, lock: db, end: () => db.end() };
}

/** The store and its maintenance over `db` (setup/postgres-database.ts). */
export function openDatabase(db: Database): OpenedDatabase<Transaction> {
  return openPostgres(bindDatabase(db));
}
