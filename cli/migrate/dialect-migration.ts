// The tables of a store on MySQL or SQLite as a plain SQL file in the project's migrations folder. The
// PostgreSQL templates, Drizzle's journal and Prisma's folders are PostgreSQL's: only the plain layout
// is written for these dialects, and the others are told how to take the SQL.
import { existsSync } from "node:fs";
import path from "node:path";
import type { Lock } from "../config/lock-file.js";
import type { Registry, RegistryFeature } from "../registry/manifest.js";
import { BlocksError } from "../utils/errors.js";
import type { MigrationTarget } from "./detect-layout.js";
import type { RenderedFile } from "./render-migration.js";
import { importRegistryModule } from "./schemas.js";

export type Dialect = NonNullable<RegistryFeature["sqlSchema"]>["dialect"];

export type DialectMigrationPlan = {
  block: string;
  table: string;
  dialect: Dialect;
  statements: string[];
  /** The file's text (also what `--print` shows). */
  sql: string;
  files: RenderedFile[];
  existing?: string;
};

const NAMES: Record<Dialect, string> = { mysql: "MySQL / MariaDB", sqlite: "SQLite" };

/**
 * @example
 * await planDialectMigration({ root, registry, block: "idempotency", feature, table: "idempotency_records", target, lock });
 * // files: [{ path: "migrations/20261205015800_create_idempotency_records.mysql.sql", ... }]
 */
export async function planDialectMigration(input: {
  root: string;
  registry: Registry;
  block: string;
  feature: RegistryFeature & { sqlSchema: NonNullable<RegistryFeature["sqlSchema"]> };
  table: string;
  target: MigrationTarget;
  lock: Lock;
  now?: Date;
}): Promise<DialectMigrationPlan> {
  const dialect = input.feature.sqlSchema.dialect;
  const statements = await dialectStatements(input.registry, input.feature.sqlSchema, input.table);
  const sql = dialectSql(dialect, statements, input.table);
  const base = { block: input.block, table: input.table, dialect, statements, sql };
  const recorded = input.lock.migrations[input.table];
  if (recorded && existsSync(path.join(input.root, recorded))) return { ...base, files: [], existing: recorded };
  return { ...base, files: [{ path: `${input.target.migrations}/${stamp(input.now ?? new Date())}_create_${input.table}.${dialect}.sql`, content: sql }] };
}

/**
 * The store's DDL for `table`, from its schema module (the one the store itself and its tests use).
 *
 * @example
 * await dialectStatements(registry, { dialect: "sqlite", module: "idempotency/stores/sqlite-schema.ts", statements: "sqliteSchemaStatements" }, "t");
 */
export async function dialectStatements(registry: Registry, schema: NonNullable<RegistryFeature["sqlSchema"]>, table: string): Promise<string[]> {
  const file = path.resolve(registry.root, schema.module);
  const render = (await importRegistryModule(file, registry.root))[schema.statements];
  if (typeof render !== "function") throw new BlocksError("INVALID_REGISTRY", `The schema module ${file} does not export ${schema.statements}().`);
  try {
    return (render as (table: string) => string[])(table);
  } catch (cause) {
    throw new BlocksError("INVALID_TABLE_NAME", `"${table}" is not a valid ${NAMES[schema.dialect]} table name: ${(cause as Error).message}`, {
      suggestion: "Use lower-case letters, digits and underscores: --table orders_idempotency",
    });
  }
}

/**
 * The tables and procedures the statements create: what `doctor` looks for on the database.
 *
 * @example
 * createdObjects(mySqlSchemaStatements("t")); // { tables: ["t", "t_retries"], procedures: ["t_create"] }
 */
export function createdObjects(statements: string[]): { tables: string[]; procedures: string[] } {
  const named = (pattern: RegExp) => statements.flatMap((statement) => pattern.exec(statement)?.[1] ?? []);
  return { tables: named(/^CREATE TABLE (?:IF NOT EXISTS )?(\w+)/i), procedures: named(/^CREATE PROCEDURE (\w+)/i) };
}

/**
 * Every statement is safe to run again (IF NOT EXISTS; the procedure is dropped and created again), so
 * the file can be applied twice. MySQL's procedure body holds semicolons: the DELIMITER lines are how
 * the mysql and mariadb clients (and Flyway, Liquibase) take it.
 *
 * @example
 * dialectSql("sqlite", sqliteSchemaStatements(), "idempotency_records");
 */
export function dialectSql(dialect: Dialect, statements: string[], table: string): string {
  const header =
    dialect === "mysql"
      ? [
          `-- Create ${table} and its retry counters for MySqlStore (MySQL 8 or MariaDB 10.6+). Safe to run again.`,
          "-- Written for the mysql / mariadb client (`mariadb db < this-file`): a runner that sends the file as one",
          "-- multi-statement query takes it without the two DELIMITER lines.",
        ]
      : [`-- Create ${table} and its retry counters for SqliteStore. Safe to run again (\`sqlite3 app.db < this-file\`).`];
  const body = statements.map((statement) =>
    dialect === "mysql" && /^CREATE PROCEDURE/i.test(statement) ? `DELIMITER //\n${statement} //\nDELIMITER ;` : `${statement};`,
  );
  return `${[...header, "", body.join("\n\n")].join("\n")}\n`;
}

/**
 * What a Drizzle, Prisma or node-pg-migrate project is told: those layouts are written for PostgreSQL only.
 *
 * @example
 * unsupportedLayout("mysql", { layout: "prisma", migrations: "prisma/migrations" }); // a BlocksError naming --print
 */
export function unsupportedLayout(dialect: Dialect, target: MigrationTarget): BlocksError {
  return new BlocksError(
    "INVALID_OPTION",
    `blocks migrate writes the ${NAMES[dialect]} tables as a plain SQL file only, not into a ${target.layout} layout (${target.migrations}).`,
    {
      suggestion:
        `Take the SQL with \`blocks migrate --print > ${dialect}-idempotency.sql\` and add it to your migrations as ${target.layout} expects, ` +
        `or set "database.layout" to "sql" (and "database.migrations" to the folder) in blocks.json.`,
    },
  );
}

/** UTC `YYYYMMDDHHMMSS`, the prefix most SQL runners sort by. */
function stamp(date: Date): string {
  return date.toISOString().replace(/[-:T]/g, "").slice(0, 14);
}
