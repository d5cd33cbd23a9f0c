// SqliteStore for the shared suites: better-sqlite3 and libSQL, each on an in-memory database of the file.
import { SqliteStore, type SqliteClient } from "@/blocks/idempotency/stores/sqlite-store";
import { sqliteDropStatements } from "@/blocks/idempotency/stores/sqlite-schema";
import { betterSqlite3Client } from "@/blocks/idempotency/stores/clients/better-sqlite3";
import { libsqlClient } from "@/blocks/idempotency/stores/clients/libsql";
import { uniqueTableName } from "./services";
import type { StoreHarness, StoreKind } from "./store-harness";

/** A store on its own new tables, so tests never see each other's rows. */
export async function freshSqliteStore(client: SqliteClient): Promise<StoreHarness & { store: SqliteStore }> {
  const table = uniqueTableName();
  const store = new SqliteStore(client, { table });
  await store.createSchema();
  const run = (sql: string) => client.execute({ sql, args: [] });
  return {
    store,
    // The database clock cannot move, so move the data instead: every timestamp `ms` into the past.
    async advanceTime(ms) {
      const shift = Math.round(ms);
      await run(
        `UPDATE ${table} SET updated_at = updated_at - ${shift}, expires_at = expires_at - ${shift}, created_at = created_at - ${shift}`,
      );
      await run(`UPDATE ${table}_retries SET expires_at = expires_at - ${shift}`);
    },
    async close() {
      for (const sql of sqliteDropStatements(table)) await run(sql);
    },
  };
}

export const betterSqlite3StoreKind: StoreKind = {
  name: "SqliteStore (better-sqlite3)",
  async open() {
    const { default: Database } = await import("better-sqlite3");
    const db = new Database(":memory:");
    const client = betterSqlite3Client(db);
    return { fresh: () => freshSqliteStore(client), close: async () => void db.close() };
  },
};

export const libsqlStoreKind: StoreKind = {
  name: "SqliteStore (libSQL)",
  async open() {
    const { createClient } = await import("@libsql/client");
    const db = createClient({ url: ":memory:" });
    const client = libsqlClient(db);
    return { fresh: () => freshSqliteStore(client), close: async () => db.close() };
  },
};

export const sqliteStoreKinds: StoreKind[] = [betterSqlite3StoreKind, libsqlStoreKind];
