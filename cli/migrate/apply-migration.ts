// Runs a migration's statements on DATABASE_URL in one transaction, serialised by an advisory lock.
import pg from "pg";
import { BlocksError } from "../utils/errors.js";
import type { MigrationPlan } from "./render-migration.js";
import { SCHEMAS } from "./schemas.js";

export type ApplyResult = { table: string; alreadyApplied: boolean };

/**
 * Safe to run any number of times: every statement is IF NOT EXISTS, and concurrent runs queue on the lock.
 *
 * @example
 * const { alreadyApplied } = await applyMigration(process.env.DATABASE_URL, plan);
 */
export async function applyMigration(url: string | undefined, plan: MigrationPlan): Promise<ApplyResult> {
  if (!url) {
    throw new BlocksError("MISSING_DATABASE_URL", "--apply needs DATABASE_URL.", {
      suggestion: "Set DATABASE_URL=postgres://user:pass@host:5432/db (or pass --database-url), or drop --apply and run the file yourself.",
    });
  }
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
    const tables = SCHEMAS[plan.block]?.tables(plan.table) ?? [plan.table];
    const found = await client.query<{ present: boolean }>("SELECT to_regclass(name) IS NOT NULL AS present FROM unnest($1::text[]) AS name", [tables]);
    for (const statement of plan.statements) await client.query(statement);
    await client.query("COMMIT");
    return { table: plan.table, alreadyApplied: found.rows.every((row) => row.present) };
  } catch (cause) {
    await client.query("ROLLBACK").catch(() => {});
    throw new BlocksError("MIGRATION_FAILED", `Creating ${plan.table} failed; the transaction was rolled back.`, {
      cause,
      suggestion: "Check that the database user may create tables (and the schema, if the table name has one).",
    });
  } finally {
    await client.end().catch(() => {});
  }
}
