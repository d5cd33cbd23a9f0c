// MySqlStore's create procedure on the wire: what a first request and a retry with steps get back from the CALL.
import type { Pool } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MySqlStore, type MySqlClient } from "@/blocks/idempotency/stores/mysql-store";
import { mySqlDropStatements } from "@/blocks/idempotency/stores/mysql-schema";
import { openTestMySql } from "./support/mysql-store-harness";
import { uniqueTableName } from "./support/services";

const scope = { operation: "orders:create", userId: "u_1", key: "k-1" };

/** The client as it is, keeping what each CALL answered. */
function recording(pool: Pool) {
  const calls: unknown[] = [];
  const client: MySqlClient = {
    async query(sql, values) {
      const answer = await pool.query(sql, values);
      if (sql.startsWith("CALL ")) calls.push(answer[0]);
      return answer;
    },
  };
  return { client, calls };
}

describe.skipIf(!process.env.MYSQL_URL)("MySqlStore create procedure [MYSQL_URL]", () => {
  let pool: Pool;
  const tables: string[] = [];
  beforeAll(async () => {
    pool = await openTestMySql();
  });
  afterAll(async () => {
    for (const table of tables) for (const statement of mySqlDropStatements(table)) await pool.query(statement);
    await pool.end();
  });

  async function storeOn(client: MySqlClient) {
    const table = uniqueTableName("mycreate");
    tables.push(table);
    const store = new MySqlStore(client, { table });
    await store.createSchema();
    return store;
  }

  it("a first request gets the CALL's OK packet alone (no result set to build or parse) and no steps", async () => {
    const { client, calls } = recording(pool);
    const store = await storeOn(client);
    expect(await store.create({ scope, requestHash: "h", ttlMs: 60_000, token: "t-1" })).toEqual({ status: "CREATED", steps: {} });
    expect(calls).toHaveLength(1);
    expect(Array.isArray(calls[0])).toBe(false);
    expect(calls[0]).toMatchObject({ affectedRows: expect.any(Number) });
  });

  it("a retry of a released request gets its steps from create itself, and a duplicate its record", async () => {
    const { client, calls } = recording(pool);
    const store = await storeOn(client);
    await store.create({ scope, requestHash: "h", ttlMs: 60_000, token: "t-1" });
    expect(await store.markStep(scope, "t-1", "charge", '{"id":"ch_1"}', 60_000)).toBe(true);
    expect(await store.release(scope, "t-1")).toBe(true);
    expect(await store.create({ scope, requestHash: "h", ttlMs: 60_000, token: "t-2" })).toEqual({ status: "CREATED", steps: { charge: '{"id":"ch_1"}' } });
    expect(await store.create({ scope, requestHash: "h", ttlMs: 60_000, token: "t-3" })).toMatchObject({ status: "DUPLICATE", record: { token: "t-2", status: "PROCESSING" } });
    expect(calls.map((answer) => Array.isArray(answer))).toEqual([false, true, true]);
  });
});

describe.skipIf(!process.env.MYSQL_URL)("MySqlStore in a database whose default character set is latin1 [MYSQL_URL]", () => {
  const database = uniqueTableName("latin1db");
  let admin: Pool;
  let pool: Pool;
  beforeAll(async () => {
    admin = await openTestMySql();
    await admin.query(`CREATE DATABASE ${database} CHARACTER SET latin1`);
    const url = new URL(process.env.MYSQL_URL ?? "");
    url.pathname = `/${database}`;
    pool = await openTestMySql(url.toString());
  });
  afterAll(async () => {
    await pool?.end();
    await admin.query(`DROP DATABASE IF EXISTS ${database}`);
    await admin.end();
  });

  it("steps in any script come back from create as they were recorded (the procedure holds them as utf8mb4)", async () => {
    const store = new MySqlStore(pool, { table: "idempotency_records" });
    await store.createSchema();
    const result = JSON.stringify({ note: "Zürich ✓ 支付 😀" });
    await store.create({ scope, requestHash: "h", ttlMs: 60_000, token: "t-1" });
    expect(await store.markStep(scope, "t-1", "charge", result, 60_000)).toBe(true);
    expect(await store.release(scope, "t-1")).toBe(true);
    expect(await store.create({ scope, requestHash: "h", ttlMs: 60_000, token: "t-2" })).toEqual({ status: "CREATED", steps: { charge: result } });
  });
});
