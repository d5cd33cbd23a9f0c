// The MySQL / MariaDB and SQLite migrations apply twice harmlessly: a second run over a table with rows keeps every row.
import type { Pool } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mySqlDropStatements, mySqlSchemaStatements } from "@/blocks/idempotency/stores/mysql-schema";
import { MySqlStore } from "@/blocks/idempotency/stores/mysql-store";
import { sqliteDropStatements, sqliteSchemaStatements } from "@/blocks/idempotency/stores/sqlite-schema";
import { SqliteStore } from "@/blocks/idempotency/stores/sqlite-store";
import { betterSqlite3Client } from "@/blocks/idempotency/stores/clients/better-sqlite3";
import type { IdempotencyStore } from "@/blocks/idempotency/types";
import { uniqueTableName } from "./support/services";

const scope = { operation: "orders:create", userId: "u_1", key: "k-1" };

/** Writes a completed record and a retry counter, re-runs the schema, and checks both are still there and the store still works. */
async function reapplyOver(
  store: IdempotencyStore,
  apply: () => Promise<void>,
  count: (table: string) => Promise<number>,
  table: string,
) {
  await apply();
  expect(await store.create({ scope, requestHash: "h", ttlMs: 60_000, token: "t-1" })).toMatchObject({
    status: "CREATED",
  });
  expect(await store.markSuccess(scope, "t-1", '{"orderId":1}', 60_000)).toBe(true);
  expect(await store.incrementRetryCount(scope, 60_000)).toBe(1);
  await apply();
  expect(await count(table)).toBe(1);
  expect(await count(`${table}_retries`)).toBe(1);
  expect(await store.get(scope)).toMatchObject({ status: "SUCCESS", response: '{"orderId":1}' });
  expect(await store.incrementRetryCount(scope, 60_000)).toBe(2);
  // The procedure (MySQL) was replaced, not lost: create still answers in one call.
  expect(await store.create({ scope, requestHash: "h", ttlMs: 60_000, token: "t-2" })).toMatchObject({
    status: "DUPLICATE",
    record: { status: "SUCCESS" },
  });
}

describe.skipIf(!process.env.MYSQL_URL)("MySQL / MariaDB schema, applied twice [MYSQL_URL]", () => {
  let pool: Pool;
  const table = uniqueTableName("reapply");
  beforeAll(async () => {
    const { createPool } = await import("mysql2/promise");
    pool = createPool({ uri: process.env.MYSQL_URL ?? "", connectionLimit: 2 });
  });
  afterAll(async () => {
    for (const statement of mySqlDropStatements(table)) await pool.query(statement);
    await pool.end();
  });

  it("keeps the rows and the working procedure", async () => {
    const apply = async () => {
      for (const statement of mySqlSchemaStatements(table)) await pool.query(statement);
    };
    const count = async (name: string) =>
      Number(((await pool.query(`SELECT COUNT(*) AS n FROM ${name}`))[0] as Array<{ n: number }>)[0]?.n);
    await reapplyOver(new MySqlStore(pool, { table }), apply, count, table);
  });
});

describe("SQLite schema, applied twice", () => {
  it("keeps the rows and the indexes", async () => {
    const { default: Database } = await import("better-sqlite3");
    const db = new Database(":memory:");
    const table = uniqueTableName("reapply");
    const apply = async () => {
      for (const statement of sqliteSchemaStatements(table)) db.exec(statement);
      return Promise.resolve();
    };
    const count = async (name: string) =>
      Promise.resolve(Number((db.prepare(`SELECT COUNT(*) AS n FROM ${name}`).get() as { n: number }).n));
    await reapplyOver(new SqliteStore(betterSqlite3Client(db), { table }), apply, count, table);
    const indexes = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE ?")
      .all(`${table}%idx`);
    expect(indexes).toHaveLength(3);
    for (const statement of sqliteDropStatements(table)) db.exec(statement);
    db.close();
  });
});
