// The MySQL and SQLite pieces of the generated wiring and of its test: MySqlStore on a mysql2 pool,
// SqliteStore on better-sqlite3 or libSQL.
import type { StoreWiring } from "./setup-stores.js";

/** The client SqliteStore runs on: better-sqlite3 unless the project has @libsql/client (or `--client libsql`). */
export type SqliteClientName = "better-sqlite3" | "libsql";

/**
 * @example
 * sqliteClientOf(new Set(["sqlite-store", "client-libsql"])); // "libsql"
 */
export function sqliteClientOf(features: Set<string>): SqliteClientName {
  return features.has("client-libsql") ? "libsql" : "better-sqlite3";
}

/** Expired rows stay until deleted: an hourly cleanup beside the recovery (no lock needed: bounded DELETEs). */
const CLEANUP = "300_000, { cleanupEveryMs: 3_600_000 }";

/** Maintenance is recovery and cleanup on timers (setup/recovery-jobs.ts): no lock, so no `lock`. */
export function mySqlWiring(tableOption: string): StoreWiring {
  return {
    imports: [
      'import { createPool, type Pool } from "mysql2/promise";',
      'import { MySqlStore } from "@/blocks/idempotency/stores/mysql-store";',
      'import { mysql2Client, type MySqlTransaction } from "@/blocks/idempotency/stores/clients/mysql2";',
    ],
    declarations: [
      "/** Where the records live: MySQL 8 or MariaDB 10.6+. `npx blocks migrate` writes the tables' SQL for your migrations. */",
      "export type Database = Pool;",
      "/** What `handler.executeInTransaction` hands the operation: the pool connection's `query` and `execute`, inside the transaction. */",
      "export type Transaction = MySqlTransaction;",
      "",
      "/** A mysql2 pool; pass the app's own (`createIdempotency({ db: pool })`) to share its connections. */",
      "export function connectDatabase(url = process.env.MYSQL_URL): Database {",
      '  if (!url) throw new Error("idempotency-setup.ts: set MYSQL_URL (mysql://user:password@host:3306/database), or pass `db`.");',
      "  return createPool(url);",
      "}",
    ],
    indexImports: [],
    handlerType: "IdempotencyHandler<Transaction>",
    open: [],
    store: `new MySqlStore(mysql2Client(db)${tableOption})`,
    end: "await db.end();",
    recoveryOptions: CLEANUP,
  };
}

export function sqliteWiring(client: SqliteClientName, tableOption: string): StoreWiring {
  const store = 'import { SqliteStore } from "@/blocks/idempotency/stores/sqlite-store";';
  if (client === "libsql") {
    return {
      imports: [
        'import { createClient, type Client } from "@libsql/client";',
        store,
        'import { libsqlClient, type LibsqlTransaction } from "@/blocks/idempotency/stores/clients/libsql";',
      ],
      declarations: [
        "/** Where the records live: libSQL, a local file (`file:...`) or Turso shared by every app server. */",
        "export type Database = Client;",
        "/** What `handler.executeInTransaction` hands the operation: the write transaction's `execute` and `batch`. */",
        "export type Transaction = LibsqlTransaction;",
        "",
        "/** LIBSQL_URL (`libsql://...` for Turso, with LIBSQL_AUTH_TOKEN), else a file beside the app. Not `:memory:`: its transactions need a file. */",
        'export function connectDatabase(url = process.env.LIBSQL_URL ?? "file:./data/idempotency.db"): Database {',
        "  const authToken = process.env.LIBSQL_AUTH_TOKEN;",
        "  return createClient(authToken ? { url, authToken } : { url });",
        "}",
      ],
      indexImports: [],
      handlerType: "IdempotencyHandler<Transaction>",
      open: [],
      store: `new SqliteStore(libsqlClient(db)${tableOption})`,
      end: "db.close();",
      recoveryOptions: CLEANUP,
    };
  }
  return {
    imports: [
      'import { mkdirSync } from "node:fs";',
      'import { dirname } from "node:path";',
      'import BetterSqlite3 from "better-sqlite3";',
      store,
      'import { betterSqlite3Client, type BetterSqlite3Transaction } from "@/blocks/idempotency/stores/clients/better-sqlite3";',
    ],
    declarations: [
      "/** Where the records live: a SQLite file of this process (one app instance only: STORES.md says why). */",
      "export type Database = BetterSqlite3.Database;",
      "/** What `handler.executeInTransaction` hands the operation: the database's `prepare` and `exec`, inside BEGIN IMMEDIATE ... COMMIT. */",
      "export type Transaction = BetterSqlite3Transaction;",
      "",
      "/** WAL lets readers go on while one request writes; FULL flushes every commit, so a power cut loses no acknowledged record. */",
      'export function connectDatabase(file = process.env.SQLITE_PATH ?? "./data/idempotency.db"): Database {',
      "  mkdirSync(dirname(file), { recursive: true });",
      "  const db = new BetterSqlite3(file, { timeout: 5_000 });",
      '  db.pragma("journal_mode = WAL");',
      '  db.pragma("synchronous = FULL");',
      "  return db;",
      "}",
    ],
    indexImports: [],
    handlerType: "IdempotencyHandler<Transaction>",
    open: [],
    store: `new SqliteStore(betterSqlite3Client(db)${tableOption})`,
    end: "db.close();",
    recoveryOptions: CLEANUP,
  };
}
