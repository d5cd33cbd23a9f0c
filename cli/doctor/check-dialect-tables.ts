// Live check for a store on MySQL or SQLite: its tables (and MySQL's procedure) exist where its wiring
// connects (MYSQL_URL; SQLITE_PATH, or LIBSQL_URL on libSQL), read through the project's own driver.
import { existsSync } from "node:fs";
import type { SqliteClientName } from "../migrate/sqlite-client.js";
import {
  databaseFile,
  missingObjects,
  openStoreDatabase,
  storeDatabase,
  type DialectConnection,
  type StoreDatabase,
} from "../migrate/dialect-connection.js";
import { dialectStatements, type Dialect } from "../migrate/dialect-migration.js";
import type { Registry, RegistryFeature } from "../registry/types.js";
import { finding, type Finding } from "./finding.js";

export type DialectTables = {
  block: string;
  table: string;
  file: string;
  schema: NonNullable<RegistryFeature["sqlSchema"]>;
};

/**
 * Where to look: the variable the wiring reads, else its default file when that exists (doctor never
 * creates a database where the app expects its own). Undefined when there is nothing to check.
 *
 * @example
 * dialectTarget("/app", "sqlite", "libsql", { LIBSQL_URL: "file:data/app.db" });
 */
export function dialectTarget(
  root: string,
  dialect: Dialect,
  client: SqliteClientName,
  env: NodeJS.ProcessEnv = process.env,
): StoreDatabase | undefined {
  const database = storeDatabase(root, dialect, client, env);
  const file = database && databaseFile(database);
  return database?.fallback && file !== undefined && !existsSync(file) ? undefined : database;
}

/**
 * One finding per block whose objects are missing, or one when the database cannot be opened.
 *
 * @example
 * await checkDialectTables(root, registry, { block: "idempotency", table, file, schema }, dialectTarget(root, "mysql", "better-sqlite3")!);
 */
export async function checkDialectTables(
  root: string,
  registry: Registry,
  wanted: DialectTables,
  target: StoreDatabase,
): Promise<Finding[]> {
  const dialect = wanted.schema.dialect;
  const statements = await dialectStatements(registry, wanted.schema, wanted.table);
  let connection: DialectConnection;
  try {
    connection = await openStoreDatabase(root, target, { readonly: true });
  } catch (cause) {
    const fix = `Set ${target.variable} to the database the app's store uses (doctor looked at ${target.label}), then run \`npx blocks migrate --apply\` if its tables are missing.`;
    return [
      finding(
        "migration-applied",
        wanted.file,
        1,
        `cannot open ${target.label} to check the tables: ${(cause as Error).message}`,
        fix,
      ),
    ];
  }
  try {
    const missing = await missingObjects(connection, dialect, statements);
    if (missing.length === 0) return [];
    return [
      finding(
        "migration-applied",
        wanted.file,
        1,
        `${missing.join(", ")} missing on ${target.label}`,
        `Run \`npx blocks migrate --apply\` with ${target.variable} naming the app's database${target.fallback ? ` (unset, it is ${target.label})` : ""}, or apply the .${dialect}.sql file \`blocks migrate\` writes (your migration tool, or ${dialect === "mysql" ? "`mariadb <db> < file`" : "`sqlite3 <file.db> < file`"}).`,
      ),
    ];
  } catch (cause) {
    return [
      finding(
        "migration-applied",
        wanted.file,
        1,
        `cannot read the tables on ${target.label}: ${(cause as Error).message}`,
        `Check that ${target.variable} names the app's database and that its user may read the schema.`,
      ),
    ];
  } finally {
    await connection.close().catch(() => {});
  }
}
