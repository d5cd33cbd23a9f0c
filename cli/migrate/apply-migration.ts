// Runs a migration file from disk on DATABASE_URL in one transaction, serialised by an advisory lock.
import { readFile } from "node:fs/promises";
import pg from "pg";
import { BlocksError } from "../utils/errors.js";
import { insideProject } from "../utils/files.js";
import type { MigrationPlan } from "./render-migration.js";
import { MISSING_OBJECTS_SQL, schemaObjects } from "./schemas.js";

export type ApplyResult = { table: string; alreadyApplied: boolean };

/**
 * Runs the project's own migration files (`files`, project-relative: the table's create migration and
 * every update after it, in order), so edits made to them are honoured and a new database gets all of them.
 * Safe to run any number of times as rendered: every statement is IF NOT EXISTS, and concurrent runs queue on the lock.
 *
 * @example
 * const { alreadyApplied } = await applyMigration(process.env.DATABASE_URL, plan, { root: "/app", file: "migrations/2026_create_x.sql" });
 */
export async function applyMigration(
  url: string | undefined,
  plan: MigrationPlan,
  source: { root: string; files: string[] },
): Promise<ApplyResult> {
  if (!url) {
    throw new BlocksError("MISSING_DATABASE_URL", "--apply needs DATABASE_URL.", {
      suggestion:
        "Set DATABASE_URL=postgres://user:pass@host:5432/db (or pass --database-url), or drop --apply and run the file yourself.",
    });
  }
  const scripts = await Promise.all(
    source.files.map(async (file) => upSection(await readFile(insideProject(source.root, file), "utf8"))),
  );
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
    // One simple-protocol query runs each whole file, comments and statement breakpoints included.
    for (const sql of scripts) await client.query(sql);
    await client.query("COMMIT");
    return { table: plan.table, alreadyApplied: missing.rows.length === 0 };
  } catch (cause) {
    await client.query("ROLLBACK").catch(() => {});
    throw new BlocksError(
      "MIGRATION_FAILED",
      `Running ${source.files.join(", ")} failed; the transaction was rolled back.`,
      {
        cause,
        suggestion:
          "Check the file's SQL, and that the database user may create tables (and the schema, if the table name has one).",
      },
    );
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
 * The SQL files `--apply` runs for a plan, in order: the table's migrations already on disk, then the
 * one written now.
 *
 * @example
 * migrationFiles(plan); // ["migrations/20250101000000_create_idempotency_records.sql", "migrations/20261205071500_update_idempotency_records.sql"]
 */
export function migrationFiles(plan: Pick<MigrationPlan, "onDisk" | "files">): string[] {
  const written = plan.files.filter((file) => file.path.endsWith(".sql")).map((file) => file.path);
  return [...new Set([...plan.onDisk, ...written])];
}
