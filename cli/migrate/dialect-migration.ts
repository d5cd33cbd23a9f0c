// The tables of a store on MySQL or SQLite in the project's migration layout: a plain SQL file for the
// database's own client, a drizzle-kit migration, or a Prisma migration folder, where the layout's tool
// runs on that database; node-pg-migrate (PostgreSQL only) and another database's folder are refused.
import { existsSync } from "node:fs";
import path from "node:path";
import type { DatabaseDialect } from "../config/blocks-config.js";
import type { Lock } from "../config/lock-file.js";
import type { Registry, RegistryFeature } from "../registry/types.js";
import { BlocksError } from "../utils/errors.js";
import type { MigrationTarget } from "./detect-layout.js";
import { drizzleMigration } from "./drizzle-journal.js";
import type { RenderedFile } from "./rendered-file.js";
import { importRegistryModule } from "./schemas.js";
import { tableMigrations, unwrittenStatements } from "./table-migrations.js";

export type Dialect = NonNullable<RegistryFeature["sqlSchema"]>["dialect"];

export type DialectMigrationPlan = {
  block: string;
  table: string;
  dialect: Dialect;
  statements: string[];
  /** The SQL file's text (also what `--print` shows). */
  sql: string;
  files: RenderedFile[];
  existing?: string;
  /** The table's migration files already on disk (its create and update migrations), in the order they run. */
  onDisk: string[];
  notes: string[];
};

const NAMES: Record<DatabaseDialect, string> = { postgresql: "PostgreSQL", mysql: "MySQL / MariaDB", sqlite: "SQLite" };

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
  const recorded = input.lock.migrations[input.table];
  if (recorded && existsSync(path.join(input.root, recorded))) {
    // A migration written by an older version of the block lacks what changed since: an update migration adds it.
    const onDisk = tableMigrations(input.root, input.target, input.table, recorded);
    const changed = changedStatements(input.root, onDisk, statements);
    const sql = (files: RenderedFile[]) => files.find((file) => file.path.endsWith(".sql"))?.content ?? "";
    if (changed.length === 0)
      return {
        block: input.block,
        table: input.table,
        dialect,
        statements,
        sql: sql(dialectFiles(input, dialect, statements, "create").files),
        files: [],
        onDisk,
        notes: [],
        existing: recorded,
      };
    const update = dialectFiles(input, dialect, changed, "update");
    const note = `${recorded} predates part of the block's schema; ${update.files[0]?.path ?? "the new file"} adds it. Before or after the deploy: the store's "Upgrading" note in STORES.md says which.`;
    return {
      block: input.block,
      table: input.table,
      dialect,
      statements: changed,
      sql: sql(update.files),
      files: update.files,
      onDisk,
      notes: [note, ...update.notes],
    };
  }
  const { files, notes } = dialectFiles(input, dialect, statements, "create");
  const sql = files.find((file) => file.path.endsWith(".sql"))?.content ?? "";
  return { block: input.block, table: input.table, dialect, statements, sql, notes, files, onDisk: [] };
}

/** What the files on disk lack; a redefined procedure comes after the DROP that lets it be created again. */
function changedStatements(root: string, onDisk: string[], statements: string[]): string[] {
  const changed = unwrittenStatements(root, onDisk, statements).flatMap((statement) => {
    const drop = statements[statements.indexOf(statement) - 1];
    return /^CREATE PROCEDURE/i.test(statement) && drop !== undefined && /^DROP PROCEDURE IF EXISTS/i.test(drop)
      ? [drop, statement]
      : [statement];
  });
  return [...new Set(changed)];
}

function dialectFiles(
  input: { root: string; table: string; target: MigrationTarget; now?: Date },
  dialect: Dialect,
  statements: string[],
  kind: "create" | "update",
): { files: RenderedFile[]; notes: string[] } {
  const { root, table, target } = input;
  const now = input.now ?? new Date();
  const store = dialect === "mysql" ? "MySqlStore (MySQL 8 or MariaDB 10.6+)" : "SqliteStore";
  const title =
    kind === "create"
      ? `Create ${table} and its retry counters for ${store}. Safe to run again.`
      : `Update ${table} for this version of ${store}. Safe to run again.`;
  const slug = `${kind}_${table}`;
  switch (target.layout) {
    case "drizzle":
      return {
        files: drizzleMigration({ root, dir: target.migrations, slug, title, statements, now, dialect }),
        notes: [],
      };
    case "prisma":
      return {
        files: [
          { path: `${target.migrations}/${stamp(now)}_${slug}/migration.sql`, content: scriptSql(title, statements) },
        ],
        notes: [
          `Prisma does not know these tables: add them to schema.prisma (\`prisma db pull\` after applying), or \`prisma migrate dev\` will want to drop them.`,
        ],
      };
    default:
      return {
        files: [
          {
            path: `${target.migrations}/${stamp(now)}_${slug}.${dialect}.sql`,
            content: dialectSql(dialect, statements, title),
          },
        ],
        notes: [],
      };
  }
}

/**
 * A migration a tool sends whole as one multi-statement query, as Prisma's schema engine does (on
 * MySQL the server parses the procedure's BEGIN ... END itself, semicolons and all; a DELIMITER line
 * would be a syntax error there: it is a command of the mysql client, not SQL).
 */
function scriptSql(title: string, statements: string[]): string {
  return `-- ${title}\n\n${statements.map((statement) => `${statement};`).join("\n\n")}\n`;
}

/**
 * The store's DDL for `table`, from its schema module (the one the store itself and its tests use).
 *
 * @example
 * await dialectStatements(registry, { dialect: "sqlite", module: "idempotency/stores/sqlite-schema.ts", statements: "sqliteSchemaStatements" }, "t");
 */
export async function dialectStatements(
  registry: Registry,
  schema: NonNullable<RegistryFeature["sqlSchema"]>,
  table: string,
): Promise<string[]> {
  const file = path.resolve(registry.root, schema.module);
  const render = (await importRegistryModule(file, registry.root))[schema.statements];
  if (typeof render !== "function")
    throw new BlocksError("INVALID_REGISTRY", `The schema module ${file} does not export ${schema.statements}().`);
  try {
    return (render as (table: string) => string[])(table);
  } catch (cause) {
    throw new BlocksError(
      "INVALID_TABLE_NAME",
      `"${table}" is not a valid ${NAMES[schema.dialect]} table name: ${(cause as Error).message}`,
      {
        suggestion: "Use lower-case letters, digits and underscores: --table orders_idempotency",
      },
    );
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
 * dialectSql("sqlite", sqliteSchemaStatements(), "Create idempotency_records for SqliteStore. Safe to run again.");
 */
export function dialectSql(dialect: Dialect, statements: string[], title: string): string {
  const header =
    dialect === "mysql"
      ? [
          `-- ${title}`,
          "-- Written for the mysql / mariadb client (`mariadb db < this-file`): a runner that sends the file as one",
          "-- multi-statement query takes it without the two DELIMITER lines.",
        ]
      : [`-- ${title} (\`sqlite3 app.db < this-file\`)`];
  const body = statements.map((statement) =>
    dialect === "mysql" && /^CREATE PROCEDURE/i.test(statement)
      ? `DELIMITER //\n${statement} //\nDELIMITER ;`
      : `${statement};`,
  );
  return `${[...header, "", body.join("\n\n")].join("\n")}\n`;
}

/**
 * The layout a block's tables on `dialect` cannot go into: node-pg-migrate (PostgreSQL only), or a
 * Drizzle or Prisma folder whose tool runs on another database. Undefined when they can.
 *
 * @example
 * unsupportedLayout("idempotency", "mysql", { layout: "prisma", migrations: "prisma/migrations", dialect: "postgresql" }); // a BlocksError naming --print
 */
export function unsupportedLayout(
  block: string,
  dialect: DatabaseDialect,
  target: MigrationTarget,
): BlocksError | undefined {
  const project: DatabaseDialect = target.dialect ?? "postgresql";
  const fits =
    target.layout === "sql" || (target.layout === "node-pg-migrate" ? dialect === "postgresql" : project === dialect);
  if (fits) return undefined;
  const why =
    target.layout === "node-pg-migrate"
      ? "node-pg-migrate runs on PostgreSQL only"
      : `its ${target.layout} migrations (${target.migrations}) run on ${NAMES[project]} ("database.dialect" in blocks.json)`;
  return new BlocksError(
    "INVALID_OPTION",
    `blocks migrate cannot write ${block}'s ${NAMES[dialect]} tables into this project's migrations: ${why}.`,
    {
      suggestion:
        `Take the SQL with \`blocks migrate ${block} --print > ${block}.${dialect}.sql\` and run it on the store's database, ` +
        `or set "database.layout" to "sql" (and "database.migrations" to a folder of its own) in blocks.json.`,
    },
  );
}

/** UTC `YYYYMMDDHHMMSS`, the prefix most SQL runners sort by. */
function stamp(date: Date): string {
  return date.toISOString().replace(/[-:T]/g, "").slice(0, 14);
}
