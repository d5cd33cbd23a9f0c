// Builds each store implementation for the shared suites, with a way to move its clock forward.
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import { PostgresStore, type SqlClient } from "@/blocks/idempotency/stores/postgres-store";
import { preparedStatements, type PreparingClient } from "@/blocks/idempotency/stores/prepared-statements";
import type { IdempotencyStore } from "@/blocks/idempotency/types";
import { dynamoDbStoreKind } from "./dynamodb-store-harness";
import { mysqlStoreKinds } from "./mysql-store-harness";
import { redisStoreKinds } from "./redis-store-harness";
import { sqliteStoreKinds } from "./sqlite-store-harness";
import { dropTables, openTestDatabase, testDatabaseNames, uniqueTableName, type TestDatabase } from "./services";

/** A fresh, empty store plus a clock control: `advanceTime(ms)` makes every stored timestamp `ms` older. */
export type StoreHarness = {
  store: IdempotencyStore;
  advanceTime(ms: number): Promise<void>;
  close(): Promise<void>;
};

/** One factory per implementation; `open` is called once per test file, `fresh` once per test. */
export type StoreKind = {
  name: string;
  /**
   * The backend deletes expired records on its own (Redis TTL, DynamoDB TTL), so the store's
   * `cleanupExpiredRecords` has nothing to do and returns 0.
   */
  expiresByItself?: boolean;
  open(): Promise<{ fresh(): Promise<StoreHarness>; close(): Promise<void> }>;
};

export const memoryStoreKind: StoreKind = {
  name: "MemoryStore",
  async open() {
    return {
      async fresh() {
        let offset = 0;
        const store = new MemoryStore({ now: () => Date.now() + offset });
        return { store, advanceTime: async (ms) => void (offset += ms), close: async () => {} };
      },
      async close() {},
    };
  },
};

/** PostgresStore on PGlite, and on real PostgreSQL when DATABASE_URL is set. */
export const postgresStoreKinds: StoreKind[] = testDatabaseNames().map((name) => ({
  name: `PostgresStore (${name === "pglite" ? "PGlite" : "DATABASE_URL"})`,
  async open() {
    const db: TestDatabase = await openTestDatabase(name);
    return {
      fresh: () => freshPostgresStore(db.client),
      close: () => db.close(),
    };
  },
}));

/** PostgresStore through `preparedStatements` on DATABASE_URL (a `pg` Pool; PGlite has no named statements). */
export const preparedPostgresStoreKinds: StoreKind[] = testDatabaseNames()
  .filter((name) => name === "postgres")
  .map(() => ({
    name: "PostgresStore (DATABASE_URL, prepared statements)",
    async open() {
      const db = await openTestDatabase("postgres");
      const client = preparedStatements(db.client as unknown as PreparingClient);
      return {
        fresh: () => freshPostgresStore(client),
        close: () => db.close(),
      };
    },
  }));

/** The stores that scale out on a distributed engine: Redis (REDIS_URL standalone, local Cluster) and DynamoDB (dynalite). */
export const scaleOutStoreKinds: StoreKind[] = [...redisStoreKinds, dynamoDbStoreKind];

export const allStoreKinds: StoreKind[] = [
  memoryStoreKind,
  ...postgresStoreKinds,
  ...preparedPostgresStoreKinds,
  ...mysqlStoreKinds,
  ...sqliteStoreKinds,
  ...scaleOutStoreKinds,
];

/** A store on its own new table, so tests never see each other's rows. */
export async function freshPostgresStore(client: SqlClient): Promise<StoreHarness & { store: PostgresStore }> {
  const table = uniqueTableName();
  const store = new PostgresStore(client, { table });
  await store.createSchema();
  return {
    store,
    // The database clock cannot move, so move the data instead: every timestamp `ms` into the past.
    async advanceTime(ms) {
      const shift = `${Math.round(ms)} * interval '1 millisecond'`;
      await client.query(
        `UPDATE ${table} SET updated_at = updated_at - ${shift}, expires_at = expires_at - ${shift}, created_at = created_at - ${shift}`,
      );
      await client.query(`UPDATE ${table}_retries SET expires_at = expires_at - ${shift}`);
    },
    close: () => dropTables(client, table),
  };
}
