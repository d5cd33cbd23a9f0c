// SqliteStore on better-sqlite3: a SQLite file of this process (one app instance only: STORES.md says why).
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { betterSqlite3Client, type BetterSqlite3Transaction } from "../stores/clients/better-sqlite3";
import { SqliteStore } from "../stores/sqlite-store";
import { recoveryJobs } from "./recovery-jobs";
import { IDEMPOTENCY_TABLE } from "./table";
import type { OpenedDatabase } from "./variants";

/** Where the records live: a SQLite file. */
export type Database = BetterSqlite3.Database;
/** What `handler.executeInTransaction` hands the operation: the database's `prepare` and `exec`, inside BEGIN IMMEDIATE ... COMMIT. */
export type Transaction = BetterSqlite3Transaction;

/** WAL lets readers go on while one request writes; FULL flushes every commit, so a power cut loses no acknowledged record. */
export function connectDatabase(file = process.env.SQLITE_PATH ?? "./data/idempotency.db"): Database {
  mkdirSync(dirname(file), { recursive: true });
  const db = new BetterSqlite3(file, { timeout: 5_000 });
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  return db;
}

/** Expired rows stay until deleted: an hourly cleanup beside the recovery (no lock needed: bounded DELETEs). */
export function openDatabase(db: Database): OpenedDatabase<Transaction> {
  return {
    store: new SqliteStore(betterSqlite3Client(db), { table: IDEMPOTENCY_TABLE }),
    jobs: (handler, logger) => recoveryJobs(handler, logger, 300_000, { cleanupEveryMs: 3_600_000 }),
    end: () => {
      db.close();
      return Promise.resolve();
    },
  };
}
