// A connection to a MySqlStore's or SqliteStore's database through the project's own driver (mysql2,
// better-sqlite3, @libsql/client: `add` installed it, the CLI carries none), for `doctor` and `migrate --apply`.
import { existsSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { SqliteClientName } from "./sqlite-client.js";
import { createdObjects, type Dialect } from "./dialect-migration.js";

/** What runs inside `exclusive`: names (each row's first column) and SQL text as the migration tool sends it. */
export type DialectSession = {
  names(sql: string, params: string[]): Promise<string[]>;
  run(sql: string): Promise<void>;
};

export type DialectConnection = DialectSession & {
  /** MySQL: under GET_LOCK(lock) (its DDL commits at once); SQLite: in one write transaction (BEGIN IMMEDIATE). */
  exclusive<T>(lock: string, work: (session: DialectSession) => Promise<T>): Promise<T>;
  close(): Promise<void>;
};

/** `variable`: what names this database in the wiring, for messages; `fallback`: none was set, so it is the wiring's default file. */
export type StoreDatabase = {
  dialect: Dialect;
  client: SqliteClientName | "mysql2";
  url: string;
  label: string;
  variable: "MYSQL_URL" | "SQLITE_PATH" | "LIBSQL_URL";
  fallback: boolean;
};

/**
 * Where the store's database is, as its wiring finds it: MYSQL_URL; SQLITE_PATH (better-sqlite3) or
 * LIBSQL_URL (libSQL), else the wiring's default file ./data/idempotency.db (`fallback`). Undefined for
 * MySQL without MYSQL_URL. A relative path or `file:` URL is the project's, not the shell's.
 *
 * @example
 * storeDatabase("/app", "sqlite", "libsql", { LIBSQL_URL: "file:app.db" }); // { url: "file:/app/app.db", label: "LIBSQL_URL", ... }
 */
export function storeDatabase(
  root: string,
  dialect: Dialect,
  client: SqliteClientName,
  env: NodeJS.ProcessEnv = process.env,
  override?: string,
): StoreDatabase | undefined {
  if (dialect === "mysql") {
    const url = override || env.MYSQL_URL;
    return url
      ? {
          dialect,
          client: "mysql2",
          url,
          label: override ? "--database-url" : "MYSQL_URL",
          variable: "MYSQL_URL",
          fallback: false,
        }
      : undefined;
  }
  const fallback = path.join(root, "data/idempotency.db");
  if (client === "libsql") {
    const url = override || env.LIBSQL_URL;
    return url
      ? {
          dialect,
          client,
          url: projectFileUrl(root, url),
          label: override ? "--database-url" : "LIBSQL_URL",
          variable: "LIBSQL_URL",
          fallback: false,
        }
      : {
          dialect,
          client,
          url: pathToFileURL(fallback).href,
          label: "data/idempotency.db",
          variable: "LIBSQL_URL",
          fallback: true,
        };
  }
  const file = override || env.SQLITE_PATH;
  const variable = "SQLITE_PATH";
  return file
    ? {
        dialect,
        client,
        url: path.resolve(root, file),
        label: path.relative(root, path.resolve(root, file)) || file,
        variable,
        fallback: false,
      }
    : { dialect, client, url: fallback, label: "data/idempotency.db", variable, fallback: true };
}

/** The file a SQLite database lives in, or undefined for a remote libSQL (Turso) URL. */
export function databaseFile(database: StoreDatabase): string | undefined {
  if (database.client === "better-sqlite3") return database.url;
  if (database.client !== "libsql" || !database.url.startsWith("file:")) return undefined;
  return database.url.startsWith("file://")
    ? new URL(database.url).pathname
    : database.url.slice("file:".length).split("?")[0];
}

/**
 * `readonly` (doctor): never creates the database, and changes nothing. Otherwise (migrate --apply) a
 * SQLite file and its folder are created, as the wiring creates them.
 *
 * @example
 * const db = await openStoreDatabase("/app", database, { readonly: true });
 */
export async function openStoreDatabase(
  root: string,
  database: StoreDatabase,
  { readonly }: { readonly: boolean },
): Promise<DialectConnection> {
  const file = databaseFile(database);
  if (file !== undefined && readonly && !existsSync(file)) throw new Error(`${file} does not exist`);
  if (file !== undefined && !readonly) mkdirSync(path.dirname(file), { recursive: true });
  if (database.client === "mysql2") return openMySql(root, database.url, readonly);
  return database.client === "libsql"
    ? openLibsql(root, database.url)
    : openBetterSqlite3(root, database.url, readonly);
}

/**
 * The store's tables (and MySQL's procedure, shown with `()`) that `statements` create and the database lacks.
 *
 * @example
 * await missingObjects(session, "mysql", mySqlSchemaStatements("t")); // ["t_retries", "t_create()"]
 */
export async function missingObjects(
  session: DialectSession,
  dialect: Dialect,
  statements: string[],
): Promise<string[]> {
  const { tables, procedures } = createdObjects(statements);
  const missing: string[] = [];
  for (const table of tables) if ((await session.names(TABLE_SQL[dialect], [table])).length === 0) missing.push(table);
  for (const name of procedures)
    if ((await session.names(PROCEDURE_SQL, [name])).length === 0) missing.push(`${name}()`);
  return missing;
}

const TABLE_SQL: Record<Dialect, string> = {
  mysql: "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?",
  sqlite: "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?",
};
const PROCEDURE_SQL =
  "SELECT routine_name FROM information_schema.routines WHERE routine_schema = DATABASE() AND routine_name = ?";

/** `file:data/app.db` in LIBSQL_URL means the project's data/app.db, wherever the CLI was started. */
function projectFileUrl(root: string, url: string): string {
  if (!url.startsWith("file:") || url.startsWith("file:/")) return url;
  return pathToFileURL(path.resolve(root, url.slice("file:".length))).href;
}

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

const firstColumns = (rows: unknown[]) => rows.map((row) => String(Object.values(row as Record<string, unknown>)[0]));

type MySqlConnection = { query(sql: string, params?: string[]): Promise<[unknown, unknown]>; end(): Promise<void> };

async function openMySql(root: string, url: string, readonly: boolean): Promise<DialectConnection> {
  const mysql = await projectImport(root, "mysql2/promise");
  const create = (mysql.createConnection ??
    (mysql.default as Record<string, unknown> | undefined)?.createConnection) as (
    options: object,
  ) => Promise<MySqlConnection>;
  // Several statements in one query, as Prisma sends a migration: the server parses a procedure's BEGIN ... END itself.
  const connection = await create({ uri: url, connectTimeout: 5_000, multipleStatements: !readonly });
  const session: DialectSession = {
    names: async (sql, params) => firstColumns((await connection.query(sql, params))[0] as unknown[]),
    run: async (sql) => void (await connection.query(sql)),
  };
  return {
    ...session,
    exclusive: async (lock, work) => {
      const [got] = await session.names("SELECT GET_LOCK(?, 10)", [lock]);
      if (got !== "1") throw new Error(`another migration held the lock ${lock} for 10 s`);
      try {
        return await work(session);
      } finally {
        await session.names("SELECT RELEASE_LOCK(?)", [lock]).catch(() => []);
      }
    },
    close: () => connection.end(),
  };
}

type SqliteDatabase = {
  prepare(sql: string): { all(...params: string[]): unknown[] };
  exec(sql: string): void;
  close(): void;
};

async function openBetterSqlite3(root: string, file: string, readonly: boolean): Promise<DialectConnection> {
  const module = await projectImport(root, "better-sqlite3");
  const Database = (module.default ?? module) as new (file: string, options: object) => SqliteDatabase;
  const db = new Database(file, readonly ? { readonly: true, fileMustExist: true } : { timeout: 10_000 });
  const session: DialectSession = {
    names: (sql, params) => Promise.resolve(firstColumns(db.prepare(sql).all(...params))),
    run: (sql) => Promise.resolve(db.exec(sql)),
  };
  return {
    ...session,
    exclusive: async (_lock, work) => {
      db.exec("BEGIN IMMEDIATE");
      try {
        const result = await work(session);
        db.exec("COMMIT");
        return result;
      } catch (error) {
        db.exec("ROLLBACK");
        throw error;
      }
    },
    close: () => Promise.resolve(db.close()),
  };
}

type LibsqlRows = { rows: unknown[][] };
type LibsqlTransaction = {
  execute(stmt: { sql: string; args: string[] }): Promise<LibsqlRows>;
  executeMultiple(sql: string): Promise<void>;
  commit(): Promise<void>;
  close(): void;
};
type LibsqlClient = LibsqlTransaction & { transaction(mode: "write"): Promise<LibsqlTransaction> };

async function openLibsql(root: string, url: string): Promise<DialectConnection> {
  const libsql = await projectImport(root, "@libsql/client");
  const create = (libsql.createClient ??
    (libsql.default as Record<string, unknown> | undefined)?.createClient) as (config: {
    url: string;
    authToken?: string;
  }) => LibsqlClient;
  const authToken = process.env.LIBSQL_AUTH_TOKEN;
  const client = create(authToken ? { url, authToken } : { url });
  const sessionOf = (on: LibsqlTransaction): DialectSession => ({
    names: async (sql, params) => (await on.execute({ sql, args: params })).rows.map((row) => String(row[0])),
    run: (sql) => on.executeMultiple(sql),
  });
  return {
    ...sessionOf(client),
    exclusive: async (_lock, work) => {
      const transaction = await client.transaction("write");
      try {
        const result = await work(sessionOf(transaction));
        await transaction.commit();
        return result;
      } finally {
        transaction.close();
      }
    },
    close: () => Promise.resolve(client.close()),
  };
}
