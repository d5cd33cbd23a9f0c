// `migrate --apply` for a store on MySQL or SQLite: runs the migration file from disk through the project's
// driver, as the file's own tool would send it, one migrator at a time; safe to run again.
import { readFile } from "node:fs/promises";
import { BlocksError } from "../utils/errors.js";
import { insideProject } from "../utils/files.js";
import type { ApplyResult } from "./apply-migration.js";
import { missingObjects, openStoreDatabase, type DialectConnection, type StoreDatabase } from "./dialect-connection.js";
import type { DialectMigrationPlan } from "./dialect-migration.js";
import { BREAKPOINT } from "./drizzle-journal.js";
import { mysqlClientStatements } from "./mysql-script.js";

/**
 * Runs the project's own files (`files`, project-relative, in order), so edits made to it are honoured. `alreadyApplied`:
 * every table (and MySQL's procedure) was there before. MySQL commits each DDL statement at once, so
 * a failure leaves the ones before it applied (each is safe to run again); SQLite rolls the file back.
 *
 * @example
 * await applyDialectMigration(plan, { root: "/app", files: ["migrations/2026_create_x.mysql.sql"], database: storeDatabase("/app", "mysql", "better-sqlite3") });
 */
export async function applyDialectMigration(
  plan: DialectMigrationPlan,
  source: { root: string; files: string[]; database: StoreDatabase | undefined },
): Promise<ApplyResult> {
  const database = source.database;
  if (!database) {
    throw new BlocksError("MISSING_DATABASE_URL", "--apply on MySqlStore needs MYSQL_URL.", {
      suggestion: "Set MYSQL_URL=mysql://user:pass@host:3306/db (the wiring's variable), or pass --database-url.",
    });
  }
  const texts = await Promise.all(source.files.map((file) => readFile(insideProject(source.root, file), "utf8")));
  const batches = texts.flatMap((text) => batchesOf(plan.dialect, text));
  let connection: DialectConnection;
  try {
    connection = await openStoreDatabase(source.root, database, { readonly: false });
  } catch (cause) {
    throw new BlocksError(
      "MIGRATION_FAILED",
      `Could not open the ${plan.dialect === "mysql" ? "MySQL" : "SQLite"} database at ${database.label}.`,
      {
        cause,
        suggestion:
          plan.dialect === "mysql"
            ? "Check that MySQL or MariaDB is running and that the URL's host, port, user and database are right."
            : "Check the path (or URL) and that the folder is writable.",
      },
    );
  }
  try {
    return await connection.exclusive(`blocks:migrate:${plan.table}`, async (session) => {
      const missing = await missingObjects(session, plan.dialect, plan.statements);
      for (const batch of batches) await session.run(batch);
      return { table: plan.table, alreadyApplied: missing.length === 0 };
    });
  } catch (cause) {
    throw new BlocksError(
      "MIGRATION_FAILED",
      `Running ${source.files.join(", ")} on ${database.label} failed${plan.dialect === "sqlite" ? "; the transaction was rolled back" : ""}.`,
      {
        cause,
        suggestion: `Check the file's SQL and that the database user may create tables${plan.dialect === "mysql" ? " and procedures (CREATE ROUTINE); every statement is safe to run again" : ""}.`,
      },
    );
  } finally {
    await connection.close().catch(() => {});
  }
}

/**
 * What the file's tool sends: drizzle-kit each part between breakpoints; the mysql client each statement
 * between its DELIMITERs; Prisma (and a SQLite client) the whole file, several statements in one query.
 *
 * @example
 * batchesOf("mysql", "CREATE TABLE a (x int);\n--> statement-breakpoint\nCREATE TABLE b (x int);"); // two batches
 */
export function batchesOf(dialect: DialectMigrationPlan["dialect"], text: string): string[] {
  if (text.includes(BREAKPOINT)) return text.split(BREAKPOINT).filter((part) => part.trim() !== "");
  if (dialect === "mysql" && /^[ \t]*DELIMITER[ \t]/im.test(text)) return mysqlClientStatements(text);
  return [text];
}
