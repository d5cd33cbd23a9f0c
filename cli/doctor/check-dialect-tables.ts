// Live check for a store on MySQL or SQLite: its tables (and MySQL's procedure) exist on MYSQL_URL or in
// the SQLite file. The driver is the project's own (`add` installed it), so the CLI carries neither.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createdObjects, dialectStatements, type Dialect } from "../migrate/dialect-migration.js";
import type { Registry, RegistryFeature } from "../registry/manifest.js";
import { finding, type Finding } from "./finding.js";

export type DialectTables = { block: string; table: string; file: string; schema: NonNullable<RegistryFeature["sqlSchema"]> };

/** Where the database is: MYSQL_URL; SQLITE_PATH, else the wiring's default file when it exists. */
export function dialectTarget(root: string, dialect: Dialect, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (dialect === "mysql") return env.MYSQL_URL || undefined;
  if (env.SQLITE_PATH) return path.resolve(root, env.SQLITE_PATH);
  const fallback = path.join(root, "data/idempotency.db");
  return existsSync(fallback) ? fallback : undefined;
}

type Query = (sql: string, params: string[]) => Promise<string[]>;

/**
 * One finding per block whose objects are missing, or one when the database cannot be reached.
 *
 * @example
 * await checkDialectTables(root, registry, { block: "idempotency", table, file, schema }, process.env.MYSQL_URL!);
 */
export async function checkDialectTables(root: string, registry: Registry, wanted: DialectTables, target: string): Promise<Finding[]> {
  const { tables, procedures } = createdObjects(await dialectStatements(registry, wanted.schema, wanted.table));
  const where = wanted.schema.dialect === "mysql" ? "MYSQL_URL" : path.relative(root, target) || target;
  let connection: { query: Query; close(): Promise<void> };
  try {
    connection = wanted.schema.dialect === "mysql" ? await openMySql(root, target) : await openSqlite(root, target);
  } catch (cause) {
    return [finding("migration-applied", wanted.file, 1, `cannot open ${where} to check the tables: ${(cause as Error).message}`)];
  }
  try {
    const missing: string[] = [];
    for (const table of tables) if ((await connection.query(TABLE_SQL[wanted.schema.dialect], [table])).length === 0) missing.push(table);
    for (const name of procedures) if ((await connection.query(PROCEDURE_SQL, [name])).length === 0) missing.push(`${name}()`);
    if (missing.length === 0) return [];
    return [
      finding(
        "migration-applied",
        wanted.file,
        1,
        `${missing.join(", ")} missing on ${where}`,
        `Run \`npx blocks migrate\` and apply the .${wanted.schema.dialect}.sql file it writes (your migration tool, or ${wanted.schema.dialect === "mysql" ? "`mariadb <db> < file`" : "`sqlite3 <file.db> < file`"}).`,
      ),
    ];
  } finally {
    await connection.close().catch(() => {});
  }
}

const TABLE_SQL: Record<Dialect, string> = {
  mysql: "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?",
  sqlite: "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?",
};
const PROCEDURE_SQL = "SELECT routine_name FROM information_schema.routines WHERE routine_schema = DATABASE() AND routine_name = ?";

/** A package as the project resolves it: the CLI does not depend on the stores' drivers. */
async function projectImport(root: string, specifier: string): Promise<Record<string, unknown>> {
  let resolved: string;
  try {
    resolved = createRequire(path.join(root, "package.json")).resolve(specifier);
  } catch {
    throw new Error(`${specifier} is not installed in the project (install the dependencies \`blocks add\` listed)`);
  }
  return (await import(pathToFileURL(resolved).href)) as Record<string, unknown>;
}

type MySqlConnection = { query(sql: string, params: string[]): Promise<[unknown, unknown]>; end(): Promise<void> };

async function openMySql(root: string, url: string) {
  const mysql = await projectImport(root, "mysql2/promise");
  const create = (mysql.createConnection ?? (mysql.default as Record<string, unknown> | undefined)?.createConnection) as (options: object) => Promise<MySqlConnection>;
  const connection = await create({ uri: url, connectTimeout: 5_000 });
  return {
    query: async (sql: string, params: string[]) => ((await connection.query(sql, params))[0] as unknown[]).map(String),
    close: () => connection.end(),
  };
}

type SqliteDatabase = { prepare(sql: string): { all(...params: string[]): unknown[] }; close(): void };

async function openSqlite(root: string, file: string) {
  const module = await projectImport(root, "better-sqlite3");
  const Database = (module.default ?? module) as new (file: string, options: object) => SqliteDatabase;
  // Read-only and never created: doctor must not leave an empty database where the app expects its own.
  const db = new Database(file, { readonly: true, fileMustExist: true });
  return {
    query: (sql: string, params: string[]) => Promise.resolve(db.prepare(sql).all(...params).map(String)),
    close: () => Promise.resolve(db.close()),
  };
}
