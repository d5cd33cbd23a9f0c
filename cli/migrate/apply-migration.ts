// Runs a migration file from disk on DATABASE_URL in one transaction, serialised by an advisory lock.
import { readFile } from "node:fs/promises";
import pg from "pg";
import { BlocksError } from "../utils/errors.js";
import { insideProject } from "../utils/files.js";
import type { MigrationPlan } from "./render-migration.js";
import { MISSING_OBJECTS_SQL, schemaObjects } from "./schemas.js";

export type ApplyResult = { table: string; alreadyApplied: boolean };

/**
 * Runs the project's own migration file (`file`, project-relative), so edits made to it are honoured.
 * Safe to run any number of times as rendered: every statement is IF NOT EXISTS, and concurrent runs queue on the lock.
 *
 * @example
 * const { alreadyApplied } = await applyMigration(process.env.DATABASE_URL, plan, { root: "/app", file: "migrations/2026_create_x.sql" });
 */
export async function applyMigration(url: string | undefined, plan: MigrationPlan, source: { root: string; file: string }): Promise<ApplyResult> {
  if (!url) {
    throw new BlocksError("MISSING_DATABASE_URL", "--apply needs DATABASE_URL.", {
      suggestion: "Set DATABASE_URL=postgres://user:pass@host:5432/db (or pass --database-url), or drop --apply and run the file yourself.",
    });
  }
  const sql = upSection(await readFile(insideProject(source.root, source.file), "utf8"));
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
  } catch (cause) {
    throw new BlocksError("MIGRATION_FAILED", "Could not connect to the database at DATABASE_URL.", {
      cause,
      suggestion: "Check that PostgreSQL is running and that DATABASE_URL's host, port, user and database are right.",
    });
  }
  try {
    await client.query("BEGIN");
    // A migration must not wait forever behind a long transaction that holds the table.
    await client.query("SET LOCAL lock_timeout = '10s'");
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`blocks:migrate:${plan.table}`]);
    const missing = await client.query(MISSING_OBJECTS_SQL, schemaObjects(plan.block, plan.table));
    // One simple-protocol query runs the whole file, comments and statement breakpoints included.
    await client.query(sql);
    await client.query("COMMIT");
    return { table: plan.table, alreadyApplied: missing.rows.length === 0 };
  } catch (cause) {
    await client.query("ROLLBACK").catch(() => {});
    throw new BlocksError("MIGRATION_FAILED", `Running ${source.file} failed; the transaction was rolled back.`, {
      cause,
      suggestion: "Check the file's SQL, and that the database user may create tables (and the schema, if the table name has one).",
    });
  } finally {
    await client.end().catch(() => {});
  }
}

/** node-pg-migrate files hold both directions: only the part before `-- Down Migration` is run. */
export function upSection(sql: string): string {
  const down = /^--\s*Down Migration\s*$/m.exec(sql);
  return down ? sql.slice(0, down.index) : sql;
}

/**
 * The SQL file of a plan, as written or found on disk.
 *
 * @example
 * migrationFile(plan); // "migrations/20260101120000_create_idempotency_records.sql"
 */
export function migrationFile(plan: Pick<MigrationPlan, "existing" | "files">): string | undefined {
  return plan.existing ?? plan.files.find((file) => file.path.endsWith(".sql"))?.path;
}
