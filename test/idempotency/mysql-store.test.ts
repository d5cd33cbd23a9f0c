// MySqlStore's create procedure on the wire: what a first request and a retry with steps get back from the CALL.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Pool } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { MySqlStore, type MySqlClient } from "@/blocks/idempotency/stores/mysql-store";
import { mySqlDropStatements } from "@/blocks/idempotency/stores/mysql-schema";
import { openTestMySql } from "./support/mysql-store-harness";
import { uniqueTableName } from "./support/services";

const scope = { operation: "orders:create", userId: "u_1", key: "k-1" };
const quiet = { logger: { debug() {}, info() {}, warn() {}, error() {} }, heartbeatIntervalMs: 0 };

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

  it("a first request gets the CALL's OK packet alone (no result set to build or parse) and reads no steps", async () => {
    const { client, calls } = recording(pool);
    const store = await storeOn(client);
    expect(await store.create({ scope, requestHash: "h", ttlMs: 60_000, token: "t-1" })).toEqual({ status: "CREATED" });
    expect(calls).toHaveLength(1);
    expect(Array.isArray(calls[0])).toBe(false);
    expect(calls[0]).toMatchObject({ affectedRows: expect.any(Number) });
  });

  it("a retry of a released request takes the key without its steps, which get reads; a duplicate gets its record", async () => {
    const { client, calls } = recording(pool);
    const store = await storeOn(client);
    await store.create({ scope, requestHash: "h", ttlMs: 60_000, token: "t-1" });
    expect(await store.markStep(scope, "t-1", "charge", '{"id":"ch_1"}', 60_000)).toBe(true);
    expect(await store.release(scope, "t-1")).toBe(true);
    expect(await store.create({ scope, requestHash: "h", ttlMs: 60_000, token: "t-2" })).toEqual({ status: "CREATED" });
    expect(await store.get(scope)).toMatchObject({ token: "t-2", steps: { charge: '{"id":"ch_1"}' } });
    expect(await store.create({ scope, requestHash: "h", ttlMs: 60_000, token: "t-3" })).toMatchObject({
      status: "DUPLICATE",
      record: { token: "t-2", status: "PROCESSING" },
    });
    expect(calls.map((answer) => Array.isArray(answer))).toEqual([false, false, true]);
  });

  it("through the handler, only an operation that calls step pays the read of the steps: one statement, and a completed step is not run again", async () => {
    const statements: string[] = [];
    const client: MySqlClient = {
      query: (sql, values) => (statements.push(sql.trim().split(/\s+/)[0] ?? ""), pool.query(sql, values)),
    };
    const handler = new IdempotencyHandler(await storeOn(client), undefined, quiet);
    const attempt = (key: string, mailerDown: boolean, charges: string[]) =>
      handler.execute({ ...scope, key, payload: { amount: 100 } }, async ({ step }) => {
        const charge = await step("charge", () => (charges.push(key), { id: "ch_1" }));
        await step("receipt", () => {
          if (mailerDown) throw new Error("mailer unavailable");
        });
        return charge;
      });

    const charges: string[] = [];
    await expect(attempt("k-steps", true, charges)).rejects.toThrow("mailer unavailable");
    statements.length = 0;
    expect(await attempt("k-steps", false, charges)).toEqual({ response: { id: "ch_1" }, replayed: false });
    expect(charges).toEqual(["k-steps"]);
    // CALL (the key), SELECT (the steps, on the first step), UPDATE (receipt's step), UPDATE (success).
    expect(statements).toEqual(["CALL", "SELECT", "INSERT", "UPDATE"]);

    statements.length = 0;
    await handler.execute({ ...scope, key: "k-plain", payload: {} }, () => ({ ok: true }));
    expect(statements).toEqual(["CALL", "UPDATE"]);
  });

  it("beside the procedure of the version before, each version's code takes its own keys: the old one's steps stay read by it", async () => {
    const store = await storeOn(pool);
    const table = tables.at(-1) ?? "";
    const before = readFileSync(new URL("../fixtures/mysql-create-procedure-v1.sql", import.meta.url), "utf8");
    await pool.query(before.replaceAll("__TABLE__", table));
    // An instance still on the code before calls <table>_create, which reads the steps in the CALL.
    const callBefore = async (token: string) => {
      const [sets] = await pool.query(`CALL ${table}_create(?, ?, ?, ?, ?, ?, ?)`, [
        createHash("sha256")
          .update(`${scope.operation.length}:${scope.operation}${scope.userId.length}:${scope.userId}${scope.key}`)
          .digest(),
        scope.operation,
        scope.userId,
        scope.key,
        "h",
        token,
        60_000_000,
      ]);
      return sets;
    };
    await store.create({ scope, requestHash: "h", ttlMs: 60_000, token: "t-1" });
    expect(await store.markStep(scope, "t-1", "charge", '{"id":"ch_1"}', 60_000)).toBe(true);
    expect(await store.release(scope, "t-1")).toBe(true);
    const [[answer]] = (await callBefore("t-2")) as [Array<{ created: number; steps: string }>];
    expect(answer?.created).toBe(1);
    expect(JSON.parse(answer?.steps ?? "null")).toEqual({ charge: '{"id":"ch_1"}' });
    expect(await store.release(scope, "t-2")).toBe(true);
    expect(await store.create({ scope, requestHash: "h", ttlMs: 60_000, token: "t-3" })).toEqual({ status: "CREATED" });
    expect(await store.get(scope)).toMatchObject({ token: "t-3", steps: { charge: '{"id":"ch_1"}' } });
  });

  it("code deployed before the migration that adds its procedure fails closed, naming the procedure and the migration", async () => {
    const store = await storeOn(pool);
    await pool.query(`DROP PROCEDURE ${tables.at(-1)}_create_v2`);
    const created = store.create({ scope, requestHash: "h", ttlMs: 60_000, token: "t-1" });
    await expect(created).rejects.toThrow(
      new RegExp(`no procedure ${tables.at(-1)}_create_v2\\. Apply the migration \`blocks migrate\``),
    );
  });
});

describe.skipIf(!process.env.MYSQL_URL)(
  "MySqlStore in a database whose default character set is latin1 [MYSQL_URL]",
  () => {
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

    it("steps in any script come back as they were recorded (the procedure holds them as utf8mb4)", async () => {
      const store = new MySqlStore(pool, { table: "idempotency_records" });
      await store.createSchema();
      const result = JSON.stringify({ note: "Zürich ✓ 支付 😀" });
      await store.create({ scope, requestHash: "h", ttlMs: 60_000, token: "t-1" });
      expect(await store.markStep(scope, "t-1", "charge", result, 60_000)).toBe(true);
      expect(await store.release(scope, "t-1")).toBe(true);
      expect(await store.create({ scope, requestHash: "h", ttlMs: 60_000, token: "t-2" })).toEqual({
        status: "CREATED",
      });
      expect(await store.get(scope)).toMatchObject({ steps: { charge: result } });
    });
  },
);
