// A table's migration files already in the project, and what of the block's schema they do not hold yet:
// the one reading `migrate` does for PostgreSQL, MySQL and SQLite alike.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { MigrationTarget } from "./detect-layout.js";

/**
 * Every migration file written for `table` (its create and update migrations, in any layout and
 * dialect suffix) and `also` (the one the lock records), in the order they run.
 *
 * @example
 * tableMigrations("/app", { layout: "sql", migrations: "migrations" }, "idempotency_records");
 * // ["migrations/20250101000000_create_idempotency_records.sql", "migrations/20261205071500_update_idempotency_records.sql"]
 */
export function tableMigrations(
  root: string,
  target: Pick<MigrationTarget, "layout" | "migrations">,
  table: string,
  also?: string,
): string[] {
  const files = new Set<string>(also ? [also] : []);
  const dir = path.join(root, target.migrations);
  if (existsSync(dir)) {
    const slug = table.replace(/\./g, "_").replace(/_/g, "[_-]");
    const pattern = new RegExp(`(?:create|update)[_-]${slug}(?:\\.(?:mysql|sqlite))?(?:\\.sql)?$`);
    for (const name of readdirSync(dir).filter((entry) => pattern.test(entry))) {
      files.add(
        target.layout === "prisma" ? `${target.migrations}/${name}/migration.sql` : `${target.migrations}/${name}`,
      );
    }
  }
  return [...files].filter((file) => existsSync(path.join(root, file))).sort();
}

/**
 * The statements none of `files` holds yet. A table, index or column is compared by the statement's
 * first line (its name); a definition that is replaced whole (`CREATE OR REPLACE`, a MySQL
 * `CREATE PROCEDURE`) by its whole text, so one whose body changed is written again.
 *
 * @example
 * unwrittenStatements("/app", ["migrations/2025_create_t.sql"], postgresSchemaStatements("t")); // [] when nothing changed
 */
export function unwrittenStatements(root: string, files: string[], statements: string[]): string[] {
  const written = files.map((file) => normalized(readFileSync(path.join(root, file), "utf8"))).join("\n");
  const identity = (statement: string) =>
    /^CREATE (?:OR REPLACE |PROCEDURE )/i.test(statement) ? statement : (statement.split("\n")[0] ?? statement);
  return statements.filter((statement) => !written.includes(normalized(identity(statement))));
}

function normalized(sql: string): string {
  return sql.replace(/\s+/g, " ").trim().toLowerCase();
}
