// Every client that gives a store transactions, on every dialect (PostgreSQL, MySQL / MariaDB, SQLite), for the
// transactional suites and their SIGKILL children: the store on the adapter, a write in the client's idiom, and an
// observer on a connection of its own.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MySqlStore, type TransactionalMySqlClient } from "@/blocks/idempotency/stores/mysql-store";
import { mySqlDropStatements } from "@/blocks/idempotency/stores/mysql-schema";
import { PostgresStore, type SqlClient } from "@/blocks/idempotency/stores/postgres-store";
import { SqliteStore } from "@/blocks/idempotency/stores/sqlite-store";
import { sqliteDropStatements } from "@/blocks/idempotency/stores/sqlite-schema";
import type { TransactionalStore } from "@/blocks/idempotency/types";
import { clientKinds, openClient, type ClientName } from "../../support/client-harness";
import { dropTables } from "../../support/services";

export type TransactionalStoreUnderTest = TransactionalStore<unknown> & { createSchema(): Promise<void> };

type MySqlClientName =
  "mysql2-pool" | "mysql2-connection" | "drizzle-mysql2" | "drizzle-mysql2-connection" | "kysely-mysql2";
type SqliteClientName = "better-sqlite3" | "libsql";
export type TransactionalClientName = ClientName | MySqlClientName | SqliteClientName;

/** One client, opened on `location` (DATABASE_URL, a MySQL URL, an SQLite file, or "" for PGlite). */
export type OpenedTransactionalClient = {
  /** The store on the adapter; `wrap` sees the adapter first (to count what it sends). */
  store(table: string, wrap?: <C extends object>(client: C) => C): TransactionalStoreUnderTest;
  /** A business write in the client's own idiom, on its own transaction object: one row (`key`) in `table`. */
  write(tx: unknown, table: string, key: string): Promise<unknown>;
  /** SQL text with no parameters through the client's raw-SQL call on its transaction object. */
  raw(tx: unknown, text: string): Promise<unknown>;
  /** Members (dotted paths) of the client's transaction object that end or leave the transaction (refused on the guarded one). */
  escapes: string[];
  /** PostgreSQL: the adapter's own `query`, which the PGlite observer reads through (one connection, one database). */
  sql?: SqlClient;
  close(): Promise<void>;
};

/** Opens one client by name: the suites and the SIGKILL children use the same code. */
export async function openTransactionalClient(
  name: TransactionalClientName,
  location: string,
): Promise<OpenedTransactionalClient> {
  switch (name) {
    case "mysql2-pool":
    case "mysql2-connection":
    case "drizzle-mysql2":
    case "drizzle-mysql2-connection":
    case "kysely-mysql2":
      return openMySqlClient(name, location);
    case "better-sqlite3":
    case "libsql":
      return openSqliteClient(name, location);
    default: {
      const opened = await openClient(name, location);
      return {
        store: (table, wrap = (c) => c) =>
          new PostgresStore(wrap(opened.client), { table }) as TransactionalStoreUnderTest,
        write: (tx, table, key) => opened.write(tx, table, key),
        raw: (tx, text) => opened.raw(tx, text),
        escapes: opened.escapes,
        sql: opened.client,
        close: () => opened.close(),
      };
    }
  }
}

async function openMySqlClient(name: MySqlClientName, location: string): Promise<OpenedTransactionalClient> {
  const mysql = await import("mysql2/promise");
  const store =
    (client: TransactionalMySqlClient<unknown>) =>
    (table: string, wrap: <C extends object>(client: C) => C = (c) => c) =>
      new MySqlStore(wrap(client), { table }) as TransactionalStoreUnderTest;
  type Tx = { query(sql: string, values?: unknown[]): Promise<unknown> };
  switch (name) {
    case "mysql2-pool":
    case "mysql2-connection": {
      const { mysql2Client } = await import("@/blocks/idempotency/stores/clients/mysql2");
      const db =
        name === "mysql2-pool"
          ? mysql.createPool({ uri: location, connectionLimit: 10 })
          : await mysql.createConnection({ uri: location });
      return {
        store: store(mysql2Client(db)),
        write: (tx, table, key) => (tx as Tx).query(`INSERT INTO ${table} (\`key\`) VALUES (?)`, [key]),
        raw: (tx, text) => (tx as Tx).query(text),
        escapes: ["commit", "rollback", "beginTransaction", "release", "end", "destroy"],
        close: () => db.end(),
      };
    }
    case "drizzle-mysql2":
    case "drizzle-mysql2-connection": {
      const { drizzle } = await import("drizzle-orm/mysql2");
      const { int, mysqlTable, varchar } = await import("drizzle-orm/mysql-core");
      const { drizzleMySqlClient } = await import("@/blocks/idempotency/stores/clients/drizzle-mysql");
      const driver =
        name === "drizzle-mysql2"
          ? mysql.createPool({ uri: location, connectionLimit: 10 })
          : await mysql.createConnection({ uri: location });
      const writes = (table: string) =>
        mysqlTable(table, {
          id: int("id").autoincrement().primaryKey(),
          key: varchar("key", { length: 200 }).notNull(),
        });
      type DrizzleTx = {
        insert(table: ReturnType<typeof writes>): { values(row: { key: string }): Promise<unknown> };
        execute(text: string): Promise<unknown>;
      };
      return {
        store: store(drizzleMySqlClient(drizzle(driver))),
        write: (tx, table, key) => (tx as DrizzleTx).insert(writes(table)).values({ key }),
        raw: (tx, text) => (tx as DrizzleTx).execute(text),
        escapes: ["setTransaction"],
        close: () => driver.end(),
      };
    }
    case "kysely-mysql2": {
      const { createPool } = await import("mysql2");
      const { Kysely, MysqlDialect, sql } = await import("kysely");
      const { kyselyMySqlClient } = await import("@/blocks/idempotency/stores/clients/kysely-mysql");
      const db = new Kysely<Record<string, { key: string }>>({
        dialect: new MysqlDialect({ pool: createPool({ uri: location, connectionLimit: 10 }) }),
      });
      type Trx = Parameters<Parameters<ReturnType<typeof db.transaction>["execute"]>[0]>[0];
      return {
        store: store(kyselyMySqlClient(db)),
        write: (trx, table, key) => (trx as Trx).insertInto(table).values({ key }).execute(),
        raw: (trx, text) => sql.raw(text).execute(trx as Trx),
        escapes: ["startTransaction"],
        close: () => db.destroy(),
      };
    }
  }
}

async function openSqliteClient(name: SqliteClientName, location: string): Promise<OpenedTransactionalClient> {
  if (name === "better-sqlite3") {
    const { default: Database } = await import("better-sqlite3");
    const { betterSqlite3Client } = await import("@/blocks/idempotency/stores/clients/better-sqlite3");
    const db = new Database(location, { timeout: 10_000 });
    db.pragma("journal_mode = WAL");
    const client = betterSqlite3Client(db);
    type Tx = { prepare(sql: string): { run(...args: unknown[]): unknown }; exec(sql: string): unknown };
    return {
      store: (table, wrap = (c) => c) => new SqliteStore(wrap(client), { table }) as TransactionalStoreUnderTest,
      write: (tx, table, key) => Promise.resolve((tx as Tx).prepare(`INSERT INTO ${table} (key) VALUES (?)`).run(key)),
      raw: (tx, text) => Promise.resolve((tx as Tx).exec(text)),
      escapes: ["transaction", "close"],
      close: async () => void db.close(),
    };
  }
  const { createClient } = await import("@libsql/client");
  const { libsqlClient } = await import("@/blocks/idempotency/stores/clients/libsql");
  const db = createClient({ url: `file:${location}`, timeout: 10_000 });
  await db.execute("PRAGMA journal_mode = WAL");
  const client = libsqlClient(db);
  type Tx = { execute(statement: string | { sql: string; args: unknown[] }): Promise<unknown> };
  return {
    store: (table, wrap = (c) => c) => new SqliteStore(wrap(client), { table }) as TransactionalStoreUnderTest,
    write: (tx, table, key) => (tx as Tx).execute({ sql: `INSERT INTO ${table} (key) VALUES (?)`, args: [key] }),
    raw: (tx, text) => (tx as Tx).execute(text),
    escapes: ["commit", "rollback", "close"],
    close: async () => db.close(),
  };
}

/** Reads and DDL, on a connection of its own where the database has more than one. */
export type Observer = {
  /** False on PGlite: its one connection is the store's, so a read inside the operation would wait for the transaction. */
  separate: boolean;
  /** Creates the writes table: `id` and `key`. */
  createWrites(writes: string): Promise<void>;
  writesOf(writes: string, key: string): Promise<number>;
  recordOf(table: string, key: string): Promise<{ status: string; response: string | null } | undefined>;
  retryCount(table: string, key: string): Promise<number>;
  /** PostgreSQL: the ids of the transactions that wrote the record and the write (equal when they committed together). */
  transactionIds?(table: string, writes: string, key: string): Promise<[unknown, unknown]>;
  dropAll(table: string, writes: string): Promise<void>;
  close(): Promise<void>;
};

export type TransactionalKind = {
  name: string;
  client: TransactionalClientName;
  dialect: "postgres" | "mysql" | "sqlite";
  /** One connection: a duplicate queues behind the whole first transaction instead of waiting lockTimeoutMs. */
  oneConnection: boolean;
  /** In this process only (PGlite): no child can share it, so no SIGKILL case. */
  inProcess: boolean;
  location: string;
  observer(opened: OpenedTransactionalClient): Promise<Observer>;
};

function postgresObserver(sql: SqlClient, separate: boolean, close: () => Promise<void>): Observer {
  const first = async (text: string, params: unknown[]) =>
    (await sql.query(text, params)).rows[0] as Record<string, unknown> | undefined;
  return {
    separate,
    createWrites: async (writes) =>
      void (await sql.query(`CREATE TABLE ${writes} (id SERIAL PRIMARY KEY, key TEXT NOT NULL)`)),
    writesOf: async (writes, key) =>
      Number((await first(`SELECT count(*)::int AS n FROM ${writes} WHERE key = $1`, [key]))?.n),
    recordOf: async (table, key) =>
      (await first(`SELECT status, response FROM ${table} WHERE key = $1`, [key])) as
        { status: string; response: string | null } | undefined,
    retryCount: async (table, key) =>
      Number((await first(`SELECT retry_count FROM ${table}_retries WHERE key = $1`, [key]))?.retry_count ?? 0),
    transactionIds: async (table, writes, key) => [
      (await first(`SELECT xmin::text AS xid FROM ${table} WHERE key = $1`, [key]))?.xid,
      (await first(`SELECT xmin::text AS xid FROM ${writes} WHERE key = $1`, [key]))?.xid,
    ],
    async dropAll(table, writes) {
      await sql.query(`DROP TABLE IF EXISTS ${writes}`);
      await dropTables(sql, table);
    },
    close,
  };
}

async function mysqlObserver(url: string): Promise<Observer> {
  const mysql = await import("mysql2/promise");
  const pool = mysql.createPool({ uri: url, connectionLimit: 2 });
  const first = async (sql: string, args: unknown[] = []) =>
    ((await pool.query(sql, args))[0] as Array<Record<string, unknown>>)[0];
  return {
    separate: true,
    createWrites: async (writes) =>
      void (await pool.query(
        `CREATE TABLE ${writes} (id INT AUTO_INCREMENT PRIMARY KEY, \`key\` VARCHAR(200) NOT NULL) ENGINE = InnoDB`,
      )),
    writesOf: async (writes, key) =>
      Number((await first(`SELECT COUNT(*) AS n FROM ${writes} WHERE \`key\` = ?`, [key]))?.n),
    recordOf: async (table, key) =>
      (await first(`SELECT status, response FROM ${table} WHERE \`key\` = ?`, [key])) as
        { status: string; response: string | null } | undefined,
    // The counters are keyed by the scope's hash alone; each test has a table of its own.
    retryCount: async (table) => Number((await first(`SELECT retry_count FROM ${table}_retries`))?.retry_count ?? 0),
    async dropAll(table, writes) {
      await pool.query(`DROP TABLE IF EXISTS ${writes}`);
      for (const statement of mySqlDropStatements(table)) await pool.query(statement);
    },
    close: () => pool.end(),
  };
}

async function sqliteObserver(file: string): Promise<Observer> {
  const { default: Database } = await import("better-sqlite3");
  const db = new Database(file, { timeout: 10_000 });
  db.pragma("journal_mode = WAL");
  const first = (sql: string, args: unknown[] = []) =>
    db.prepare(sql).get(...args) as Record<string, unknown> | undefined;
  return {
    separate: true,
    createWrites: async (writes) => void db.exec(`CREATE TABLE ${writes} (id INTEGER PRIMARY KEY, key TEXT NOT NULL)`),
    writesOf: async (writes, key) => Number(first(`SELECT COUNT(*) AS n FROM ${writes} WHERE key = ?`, [key])?.n),
    recordOf: async (table, key) =>
      first(`SELECT status, response FROM ${table} WHERE key = ?`, [key]) as
        { status: string; response: string | null } | undefined,
    retryCount: async (table) => Number(first(`SELECT retry_count FROM ${table}_retries`)?.retry_count ?? 0),
    async dropAll(table, writes) {
      db.exec(`DROP TABLE IF EXISTS ${writes}`);
      for (const statement of sqliteDropStatements(table)) db.exec(statement);
    },
    close: async () => void db.close(),
  };
}

async function postgresPoolObserver(url: string): Promise<Observer> {
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  return postgresObserver(pool, true, () => pool.end());
}

const databaseUrl = process.env.DATABASE_URL;
const mysqlUrl = process.env.MYSQL_URL;
const sqliteFile = () => join(mkdtempSync(join(tmpdir(), "idem-sqlite-")), "idempotency.db");

const ON_MYSQL: Array<[MySqlClientName, string]> = [
  ["mysql2-pool", "a mysql2 Pool"],
  ["mysql2-connection", "a mysql2 Connection"],
  ["drizzle-mysql2", "Drizzle over a mysql2 Pool"],
  ["drizzle-mysql2-connection", "Drizzle over a mysql2 Connection"],
  ["kysely-mysql2", "Kysely (MysqlDialect, mysql2 pool)"],
];

/**
 * Every transactional client: PostgresStore on each PostgreSQL adapter (PGlite always, the rest on DATABASE_URL),
 * MySqlStore on each MySQL client (MYSQL_URL), SqliteStore on better-sqlite3 and libSQL (a file per kind, always).
 */
export const transactionalKinds: TransactionalKind[] = [
  ...clientKinds.map((kind) => ({
    name: `PostgresStore on ${kind.name}`,
    client: kind.client,
    dialect: "postgres" as const,
    oneConnection: kind.oneConnection,
    inProcess: kind.database === "pglite",
    location: kind.database === "pglite" ? "" : (databaseUrl ?? ""),
    observer: async (opened: OpenedTransactionalClient) =>
      kind.database === "pglite"
        ? postgresObserver(opened.sql as SqlClient, false, async () => {})
        : postgresPoolObserver(databaseUrl ?? ""),
  })),
  ...(mysqlUrl ? ON_MYSQL : []).map(([client, label]) => ({
    name: `MySqlStore on ${label} (MYSQL_URL)`,
    client,
    dialect: "mysql" as const,
    oneConnection: client.endsWith("connection"),
    inProcess: false,
    location: mysqlUrl ?? "",
    observer: () => mysqlObserver(mysqlUrl ?? ""),
  })),
  ...(["better-sqlite3", "libsql"] as const).map((client) => {
    const location = sqliteFile();
    return {
      name: `SqliteStore on ${client} (file)`,
      client,
      dialect: "sqlite" as const,
      oneConnection: true,
      inProcess: false,
      location,
      observer: () => sqliteObserver(location),
    };
  }),
];
