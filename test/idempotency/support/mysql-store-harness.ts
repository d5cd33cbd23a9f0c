// MySqlStore for the shared suites, on MYSQL_URL (MySQL 8 or MariaDB 10.6+), each test on tables of its own.
import { MySqlStore, type MySqlClient } from "@/blocks/idempotency/stores/mysql-store";
import { mySqlDropStatements } from "@/blocks/idempotency/stores/mysql-schema";
import { uniqueTableName } from "./services";
import type { StoreHarness, StoreKind } from "./store-harness";

export const mysqlUrl = process.env.MYSQL_URL;

/** Opens a mysql2 pool on MYSQL_URL. */
export async function openTestMySql(url = mysqlUrl) {
  if (!url) throw new Error("openTestMySql needs MYSQL_URL.");
  const { createPool } = await import("mysql2/promise");
  return createPool({ uri: url, connectionLimit: 20 });
}

/** A store on its own new tables, so tests never see each other's rows. */
export async function freshMySqlStore(client: MySqlClient): Promise<StoreHarness & { store: MySqlStore }> {
  const table = uniqueTableName();
  const store = new MySqlStore(client, { table });
  await store.createSchema();
  return {
    store,
    // The server's clock cannot move, so move the data instead: every timestamp `ms` into the past.
    async advanceTime(ms) {
      const shift = `INTERVAL ${Math.round(ms * 1000)} MICROSECOND`;
      await client.query(
        `UPDATE ${table} SET updated_at = updated_at - ${shift}, expires_at = expires_at - ${shift}, created_at = created_at - ${shift}`,
      );
      await client.query(`UPDATE ${table}_retries SET expires_at = expires_at - ${shift}`);
    },
    async close() {
      for (const statement of mySqlDropStatements(table)) await client.query(statement);
    },
  };
}

/** MySqlStore on MYSQL_URL; none without it (the suites name the skip). */
export const mysqlStoreKinds: StoreKind[] = mysqlUrl
  ? [
      {
        name: "MySqlStore (MYSQL_URL)",
        async open() {
          const pool = await openTestMySql();
          return { fresh: () => freshMySqlStore(pool), close: () => pool.end() };
        },
      },
    ]
  : [];

/** MySqlStore through the ORM adapters over mysql2 (Drizzle, Kysely), for the store contract over every client. */
export const mysqlClientStoreKinds: StoreKind[] = mysqlUrl
  ? [
      {
        name: "MySqlStore via Drizzle over a mysql2 Pool (MYSQL_URL)",
        async open() {
          const pool = await openTestMySql();
          const { drizzle } = await import("drizzle-orm/mysql2");
          const { drizzleMySqlClient } = await import("@/blocks/idempotency/stores/clients/drizzle-mysql");
          const client = drizzleMySqlClient(drizzle(pool));
          return { fresh: () => freshMySqlStore(client), close: () => pool.end() };
        },
      },
      {
        name: "MySqlStore via Kysely (MysqlDialect over a mysql2 pool, MYSQL_URL)",
        async open() {
          const { createPool } = await import("mysql2");
          const { Kysely, MysqlDialect } = await import("kysely");
          const { kyselyMySqlClient } = await import("@/blocks/idempotency/stores/clients/kysely-mysql");
          const db = new Kysely<Record<string, never>>({
            dialect: new MysqlDialect({ pool: createPool({ uri: mysqlUrl, connectionLimit: 20 }) }),
          });
          return { fresh: () => freshMySqlStore(kyselyMySqlClient(db)), close: () => db.destroy() };
        },
      },
    ]
  : [];
