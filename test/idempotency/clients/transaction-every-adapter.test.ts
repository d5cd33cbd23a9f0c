// `transaction: true` on every adapter that takes it (Express, Fastify, Hono, Koa, NestJS, fetch): the route's writes go
// through ctx.tx and commit with the record, or not at all; an adapter or handler that cannot keep it refuses to start.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { pgClient } from "@/blocks/idempotency/stores/clients/pg";
import { pgliteClient } from "@/blocks/idempotency/stores/clients/pglite";
import { PostgresStore, type SqlClient } from "@/blocks/idempotency/stores/postgres-store";
import { recordingLogger } from "@/blocks/idempotency/testing/recorders";
import { dropTables, SERVICE_START_TIMEOUT_MS, uniqueTableName } from "../support/services";
import { ADAPTERS, transactionalApps, type Queryable, type TransactionalApp } from "./support/transactional-apps";

const COMMITTED = "idempotency: executed and committed the response with the operation's writes";
const databaseUrl = process.env.DATABASE_URL;

type Database = { sql: SqlClient; handlerOn(table: string, logger: ReturnType<typeof recordingLogger>): IdempotencyHandler<Queryable>; close(): Promise<void> };

const databases: Record<string, { skip: boolean; open(): Promise<Database> }> = {
  pglite: {
    skip: false,
    async open() {
      const { PGlite } = await import("@electric-sql/pglite");
      const db = new PGlite();
      await db.waitReady;
      return { sql: db, handlerOn: (table, logger) => new IdempotencyHandler(new PostgresStore(pgliteClient(db), { table }), undefined, { logger }), close: () => db.close() };
    },
  },
  "[DATABASE_URL] postgres": {
    skip: !databaseUrl,
    async open() {
      const { default: pg } = await import("pg");
      const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
      return { sql: pool, handlerOn: (table, logger) => new IdempotencyHandler(new PostgresStore(pgClient(pool), { table }), undefined, { logger }), close: () => pool.end() };
    },
  },
};

for (const [databaseName, { skip, open }] of Object.entries(databases)) {
  describe.skipIf(skip)(`transaction: true on every adapter (${databaseName})`, () => {
    let db: Database;
    let table: string;
    let logger: ReturnType<typeof recordingLogger>;
    let handler: IdempotencyHandler<Queryable>;
    let app: TransactionalApp | undefined;
    const row = async (text: string, key: string) => (await db.sql.query(text, [key])).rows[0] as Record<string, unknown> | undefined;
    const writesOf = async (key: string) => (await row(`SELECT count(*)::int AS n FROM ${table}_orders WHERE key = $1`, key))?.n as number | undefined;
    const recordOf = async (key: string) => row(`SELECT status, xmin::text AS xid FROM ${table} WHERE key = $1`, key);
    const committedLines = () => logger.lines.filter((line) => line.msg === COMMITTED);
    const insertOrder = async (tx: Queryable, key: string, amount: number) => {
      await tx.query(`INSERT INTO ${table}_orders (key, amount) VALUES ($1, $2)`, [key, amount]);
    };

    beforeAll(async () => {
      db = await open();
    }, SERVICE_START_TIMEOUT_MS);
    afterAll(async () => db?.close());
    beforeEach(async () => {
      table = uniqueTableName("tx_every");
      logger = recordingLogger();
      handler = db.handlerOn(table, logger);
      const store = new PostgresStore(db.sql, { table });
      await store.createSchema();
      await db.sql.query(`CREATE TABLE ${table}_orders (id SERIAL PRIMARY KEY, key TEXT NOT NULL, amount INT NOT NULL, xid TEXT NOT NULL DEFAULT txid_current()::text)`);
    });
    afterEach(async () => {
      await app?.close();
      app = undefined;
      await db.sql.query(`DROP TABLE IF EXISTS ${table}_orders`);
      await dropTables(db.sql, table);
    });

    for (const adapter of ADAPTERS) {
      // Finding "A promise the code does not keep": fetch (and Koa, NestJS) accepted `transaction: true`, ran the record in a
      // transaction, handed the route none, and logged that the route's writes committed with the response.
      it(`${adapter}: a promise the code does not keep: the route writes on ctx.tx, the write and the record commit in one transaction, and only then the log says so`, async () => {
        let runs = 0;
        app = await transactionalApps[adapter](handler, async (tx, key, amount) => {
          await insertOrder(tx, key, amount);
          return { status: 201, body: { key, amount, run: ++runs } };
        });
        const first = await app.post("o-1", { amount: 5 });
        expect(first.status).toBe(201);
        const record = await recordOf("o-1");
        expect(record).toMatchObject({ status: "SUCCESS" });
        expect((await row(`SELECT xid FROM ${table}_orders WHERE key = $1`, "o-1"))?.xid).toBe(record?.xid);
        expect(committedLines()).toHaveLength(1);
        const retry = await app.post("o-1", { amount: 5 });
        expect(retry).toEqual(first);
        expect(runs).toBe(1);
        expect(await writesOf("o-1")).toBe(1);
      });

      it(`${adapter}: the operation fails after its write: nothing of it remains; a thrown error frees the key, a 422 fails it; no line claims a commit`, async () => {
        app = await transactionalApps[adapter](handler, async (tx, key, amount) => {
          await insertOrder(tx, key, amount);
          if (amount > 100) return { status: 422, body: { error: "amount too large" } };
          throw new Error("payment provider down");
        });
        expect((await app.post("o-500", { amount: 1 })).status).toBe(500);
        expect(await writesOf("o-500")).toBe(0);
        expect(await recordOf("o-500")).toBeUndefined();
        expect((await app.post("o-422", { amount: 500 })).status).toBe(422);
        expect(await writesOf("o-422")).toBe(0);
        expect(await recordOf("o-422")).toMatchObject({ status: "FAILED" });
        expect((await app.post("o-422", { amount: 500 })).status).toBe(409);
        expect(committedLines()).toEqual([]);
        expect(logger.lines.map((line) => line.msg)).toEqual(
          expect.arrayContaining(["idempotency: transient failure, writes rolled back, key free for retry", "idempotency: permanent failure, writes rolled back, key marked FAILED"]),
        );
      });

      it(`${adapter}: a request without a key is refused 400 rather than run with no transaction (a transactional route requires its key)`, async () => {
        let runs = 0;
        app = await transactionalApps[adapter](handler, async () => ({ status: 201, body: { run: ++runs } }));
        const reply = await app.post(undefined, { amount: 5 });
        expect(reply.status).toBe(400);
        expect(reply.text).toContain("IDEMPOTENCY_KEY_MISSING");
        expect(runs).toBe(0);
      });

      it.skipIf(databaseName === "pglite")(`${adapter}: SIGKILL after the route's write and before COMMIT leaves neither the write nor the record, logs no commit, and the retry runs once`, async () => {
        const child = fork(fileURLToPath(new URL("./support/killed-http-transaction.ts", import.meta.url)), [adapter, table, "o-kill"], {
          execArgv: ["--import", "tsx"],
          stdio: ["ignore", "pipe", "pipe", "ipc"],
        });
        let output = "";
        child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
        child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
        const exited = new Promise((resolve) => child.once("exit", resolve));
        await new Promise<void>((resolve, reject) => {
          child.once("message", () => resolve());
          void exited.then(() => reject(new Error(`child exited before writing:\n${output}`)));
        });
        child.kill("SIGKILL");
        await exited;
        expect(output).not.toContain("committed");
        expect(await writesOf("o-kill")).toBe(0);
        expect(await recordOf("o-kill")).toBeUndefined();
        app = await transactionalApps[adapter](handler, async (tx, key, amount) => {
          await insertOrder(tx, key, amount);
          return { status: 201, body: { key } };
        });
        // The server aborts the dead connection's transaction; until then the retry waits on its row lock.
        expect((await app.post("o-kill", { amount: 10 })).status).toBe(201);
        expect(await writesOf("o-kill")).toBe(1);
        expect(await recordOf("o-kill")).toMatchObject({ status: "SUCCESS" });
      }, 60_000);
    }
  });
}
