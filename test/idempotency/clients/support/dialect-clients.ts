// MySqlStore and SqliteStore on each client that gives them transactions, for the transactional suites and the killed child.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MySqlStore } from "@/blocks/idempotency/stores/mysql-store";
import { mySqlDropStatements } from "@/blocks/idempotency/stores/mysql-schema";
import { SqliteStore } from "@/blocks/idempotency/stores/sqlite-store";
import { sqliteDropStatements } from "@/blocks/idempotency/stores/sqlite-schema";
import type { TransactionalStore } from "@/blocks/idempotency/types";

export type DialectStore = TransactionalStore<unknown> & { createSchema(): Promise<void> };

export type DialectClientName = "mysql2-pool" | "mysql2-connection" | "better-sqlite3" | "libsql";

/** One client, opened on `location` (a MySQL URL or an SQLite file). */
export type OpenedDialectClient = {
  /** The store on the adapter; `wrap` sees the adapter first (to count what it sends). */
  store(table: string, wrap?: <C extends object>(client: C) => C): DialectStore;
  /** A business write in the client's own idiom, on its own transaction object: one row in `table`. */
  write(tx: unknown, table: string, key: string): Promise<unknown>;
  /** SQL text with no parameters through the client's raw-SQL call on its transaction object. */
  raw(tx: unknown, text: string): Promise<unknown>;
  /** Members of the client's transaction object that end or leave the transaction (refused on the guarded one). */
  escapes: string[];
  close(): Promise<void>;
};

/** Opens one client by name: the tests and the SIGKILL child use the same code. */
export async function openDialectClient(name: DialectClientName, location: string): Promise<OpenedDialectClient> {
  switch (name) {
    case "mysql2-pool":
    case "mysql2-connection": {
      const mysql = await import("mysql2/promise");
      const { mysql2Client } = await import("@/blocks/idempotency/stores/clients/mysql2");
      const db = name === "mysql2-pool" ? mysql.createPool({ uri: location, connectionLimit: 10 }) : await mysql.createConnection({ uri: location });
      const client = mysql2Client(db);
      type Tx = { query(sql: string, values?: unknown[]): Promise<unknown> };
      return {
        store: (table, wrap = (c) => c) => new MySqlStore(wrap(client), { table }) as DialectStore,
        write: (tx, table, key) => (tx as Tx).query(`INSERT INTO ${table} (\`key\`) VALUES (?)`, [key]),
        raw: (tx, text) => (tx as Tx).query(text),
        escapes: ["commit", "rollback", "beginTransaction", "release", "end", "destroy"],
        close: () => db.end(),
      };
    }
    case "better-sqlite3": {
      const { default: Database } = await import("better-sqlite3");
      const { betterSqlite3Client } = await import("@/blocks/idempotency/stores/clients/better-sqlite3");
      const db = new Database(location, { timeout: 10_000 });
      db.pragma("journal_mode = WAL");
      const client = betterSqlite3Client(db);
      type Tx = { prepare(sql: string): { run(...args: unknown[]): unknown }; exec(sql: string): unknown };
      return {
        store: (table, wrap = (c) => c) => new SqliteStore(wrap(client), { table }) as DialectStore,
        write: (tx, table, key) => Promise.resolve((tx as Tx).prepare(`INSERT INTO ${table} (key) VALUES (?)`).run(key)),
        raw: (tx, text) => Promise.resolve((tx as Tx).exec(text)),
        escapes: ["transaction", "close"],
        close: async () => void db.close(),
      };
    }
    case "libsql": {
      const { createClient } = await import("@libsql/client");
      const { libsqlClient } = await import("@/blocks/idempotency/stores/clients/libsql");
      const db = createClient({ url: `file:${location}`, timeout: 10_000 });
      await db.execute("PRAGMA journal_mode = WAL");
      const client = libsqlClient(db);
      type Tx = { execute(statement: string | { sql: string; args: unknown[] }): Promise<unknown> };
      return {
        store: (table, wrap = (c) => c) => new SqliteStore(wrap(client), { table }) as DialectStore,
        write: (tx, table, key) => (tx as Tx).execute({ sql: `INSERT INTO ${table} (key) VALUES (?)`, args: [key] }),
        raw: (tx, text) => (tx as Tx).execute(text),
        escapes: ["commit", "rollback", "close"],
        close: async () => db.close(),
      };
    }
  }
}

/** Reads and DDL on a connection of its own, so the probes never queue behind (or join) the store's transaction. */
export type Observer = {
  rows(sql: string, args?: unknown[]): Promise<Array<Record<string, unknown>>>;
  /** Creates the writes table: `id` and `key`. */
  createWrites(table: string): Promise<void>;
  dropAll(table: string, writes: string): Promise<void>;
  close(): Promise<void>;
};

export type DialectKind = {
  name: string;
  client: DialectClientName;
  dialect: "mysql" | "sqlite";
  /** One connection: a duplicate queues behind the whole first transaction instead of waiting lockTimeoutMs. */
  oneConnection: boolean;
  location: string;
  observer(): Promise<Observer>;
};

async function mysqlObserver(url: string): Promise<Observer> {
  const mysql = await import("mysql2/promise");
  const pool = mysql.createPool({ uri: url, connectionLimit: 2 });
  const rows = async (sql: string, args: unknown[] = []) => (await pool.query(sql, args))[0] as Array<Record<string, unknown>>;
  return {
    rows,
    createWrites: async (table) => void (await pool.query(`CREATE TABLE ${table} (id INT AUTO_INCREMENT PRIMARY KEY, \`key\` VARCHAR(200) NOT NULL) ENGINE = InnoDB`)),
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
  return {
    rows: async (sql, args = []) => db.prepare(sql).all(...args) as Array<Record<string, unknown>>,
    createWrites: async (table) => void db.exec(`CREATE TABLE ${table} (id INTEGER PRIMARY KEY, key TEXT NOT NULL)`),
    async dropAll(table, writes) {
      db.exec(`DROP TABLE IF EXISTS ${writes}`);
      for (const statement of sqliteDropStatements(table)) db.exec(statement);
    },
    close: async () => void db.close(),
  };
}

const mysqlUrl = process.env.MYSQL_URL;
const sqliteFile = () => join(mkdtempSync(join(tmpdir(), "idem-sqlite-")), "idempotency.db");

/** Every transactional client of MySqlStore (on MYSQL_URL when set) and SqliteStore (a file per kind, always). */
export const dialectKinds: DialectKind[] = [
  ...(["better-sqlite3", "libsql"] as const).map((client) => {
    const location = sqliteFile();
    return { name: `SqliteStore on ${client} (file)`, client, dialect: "sqlite" as const, oneConnection: true, location, observer: () => sqliteObserver(location) };
  }),
  ...(mysqlUrl
    ? (["mysql2-pool", "mysql2-connection"] as const).map((client) => ({
        name: `MySqlStore on ${client === "mysql2-pool" ? "a mysql2 Pool" : "a mysql2 Connection"} (MYSQL_URL)`,
        client,
        dialect: "mysql" as const,
        oneConnection: client === "mysql2-connection",
        location: mysqlUrl,
        observer: () => mysqlObserver(mysqlUrl),
      }))
    : []),
];
