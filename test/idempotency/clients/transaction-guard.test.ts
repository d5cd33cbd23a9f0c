// The operation's transaction cannot be ended or left, on every client adapter (issue 25, finding "transactional mode hands the route the raw PoolClient").
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { PostgresStore, type SqlClient } from "@/blocks/idempotency/stores/postgres-store";
import { clientKinds, type OpenedClient } from "../support/client-harness";
import { dropTables, SERVICE_START_TIMEOUT_MS, uniqueTableName } from "../support/services";

class Declined extends Error {}

const REFUSED = { code: "TRANSACTION_CONTROL_REFUSED" };

/** Text that ends, leaves or reconfigures the transaction, in the spellings a check on the first word alone would miss. */
const ESCAPES = [
  "COMMIT",
  "  commit work ",
  "/* settle */ CoMmIt",
  "/* nested /* comment */ */ commit",
  "-- settle\ncommit",
  "END",
  "ROLLBACK",
  "abort",
  "BEGIN",
  "start transaction",
  "PREPARE TRANSACTION 'escape'",
  "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
  "set session characteristics as transaction read only",
  "select 1; commit",
  "select 1;\n/* */ rollback",
  "select 'it''s'; commit",
  "select $tag$ x $tag$; commit",
  "select E'\\''; commit; --'",
];

/** Statements the guard lets through: savepoints keep the outer transaction, and a `;` inside a literal or comment splits nothing. */
const ALLOWED = [
  "SELECT 1 AS one",
  "SAVEPOINT guard_sp",
  "ROLLBACK TO SAVEPOINT guard_sp",
  "RELEASE SAVEPOINT guard_sp",
  "select ';commit' as s",
  "select $$ ; commit $$ as s",
  'select 1 as "commit; x"',
  "select 1 -- ; commit",
  "select 1;",
];

for (const kind of clientKinds) {
  describe(`transaction guard: ${kind.name}`, { timeout: 60_000 }, () => {
    let opened: OpenedClient<unknown>;
    let sql: SqlClient;
    let table: string;
    let writes: string;
    let handler: IdempotencyHandler<unknown>;
    let n = 0;
    const context = (key = `g-${++n}`) => ({ operation: "orders:create", userId: "u_1", key, payload: { amount: 10 } });
    const writesOf = async (key: string) =>
      Number(
        ((await sql.query(`SELECT count(*)::int AS n FROM ${writes} WHERE key = $1`, [key])).rows[0] as { n: number })
          .n,
      );
    const statusOf = async (key: string) =>
      ((await sql.query(`SELECT status FROM ${table} WHERE key = $1`, [key])).rows[0] as { status: string } | undefined)
        ?.status;
    /** Sync throws and rejections alike. */
    const attempt = (run: () => unknown) => Promise.resolve().then(run);

    beforeAll(async () => {
      opened = await kind.open();
      sql = opened.client;
    }, SERVICE_START_TIMEOUT_MS);
    afterAll(async () => opened?.close());
    beforeEach(async () => {
      table = uniqueTableName("guard");
      writes = `${table}_writes`;
      const store = new PostgresStore(opened.client, { table });
      await store.createSchema();
      await sql.query(`CREATE TABLE ${writes} (id SERIAL PRIMARY KEY, key TEXT NOT NULL)`);
      handler = new IdempotencyHandler(store, undefined, { maxRetries: 3, storeTimeoutMs: 10_000 });
    });
    afterEach(async () => {
      await sql.query(`DROP TABLE IF EXISTS ${writes}`);
      await dropTables(sql, table);
    });

    it("a route that runs COMMIT on tx and then fails: COMMIT is refused, its writes roll back and no PROCESSING record is left", async () => {
      const { key } = context();
      const commitThenFail = async ({ tx }: { tx: unknown }) => {
        await opened.write(tx, writes, key);
        await opened.raw(tx, "COMMIT");
        throw new Declined("declined after the commit");
      };
      await expect(handler.executeInTransaction(context(key), commitThenFail)).rejects.toMatchObject(REFUSED);
      expect(await writesOf(key)).toBe(0);
      expect(await statusOf(key)).toBeUndefined();
    });

    it("refuses every text that ends or leaves the transaction, before it reaches the database; the transaction still commits", async () => {
      const { key } = context();
      const result = await handler.executeInTransaction(context(key), async ({ tx }) => {
        for (const text of ESCAPES)
          await expect(
            attempt(() => opened.raw(tx, text)),
            text,
          ).rejects.toMatchObject(REFUSED);
        for (const path of opened.escapes) {
          const names = path.split(".");
          const owner = names
            .slice(0, -1)
            .reduce((object, name) => (object as Record<string, unknown>)[name], tx) as Record<string, () => unknown>;
          await expect(
            attempt(() => owner[names.at(-1) as string]?.()),
            path,
          ).rejects.toMatchObject(REFUSED);
        }
        await opened.write(tx, writes, key);
        return { ok: true };
      });
      expect(result).toEqual({ response: { ok: true }, replayed: false });
      expect(await writesOf(key)).toBe(1);
      expect(await statusOf(key)).toBe("SUCCESS");
    });

    it("a record that escaped its transaction PROCESSING is freed by recoverStuckRecords after the recovery window; the retry runs once", async () => {
      const { key } = context();
      const store = new PostgresStore(opened.client, { table });
      // What a COMMIT inside the operation left before the guard: the record's insert committed, never completed.
      await store.transaction(
        async (txStore) =>
          void (await txStore.create({
            scope: { operation: "orders:create", userId: "u_1", key },
            requestHash: "escaped",
            ttlMs: 60_000,
            token: crypto.randomUUID(),
          })),
      );
      expect(await statusOf(key)).toBe("PROCESSING");
      const recovering = new IdempotencyHandler(store, undefined, { heartbeatIntervalMs: 0 });
      expect(await recovering.recoverStuckRecords({ timeoutInMs: 60_000 })).toEqual({ released: 0, poisoned: 0 });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await recovering.recoverStuckRecords({ timeoutInMs: 200 })).toEqual({ released: 1, poisoned: 0 });
      expect(await statusOf(key)).toBeUndefined();
      const { response } = await handler.executeInTransaction(
        context(key),
        async ({ tx }) => (await opened.write(tx, writes, key), { orderId: key }),
      );
      expect(response).toEqual({ orderId: key });
      expect(await writesOf(key)).toBe(1);
    });

    it("lets savepoints and ordinary statements through, literals and comments included", async () => {
      const { key } = context();
      await handler.executeInTransaction(context(key), async ({ tx }) => {
        for (const text of ALLOWED) await opened.raw(tx, text);
        await opened.write(tx, writes, key);
      });
      expect(await writesOf(key)).toBe(1);
    });
  });
}

describe("transaction guard: a pg Pool connection released mid-transaction", { timeout: 60_000 }, () => {
  const url = process.env.DATABASE_URL;

  it.skipIf(!url)(
    "[DATABASE_URL] two concurrent requests where the first calls tx.release(): the second's record and writes are not committed by the first's COMMIT",
    async () => {
      const { default: pg } = await import("pg");
      const { pgClient } = await import("@/blocks/idempotency/stores/clients/pg");
      // One connection, so a released one is the very one the second request gets.
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      pool.on("error", () => {});
      const table = uniqueTableName("release");
      const writes = `${table}_writes`;
      const store = new PostgresStore(pgClient(pool), { table });
      try {
        await store.createSchema();
        await pool.query(`CREATE TABLE ${writes} (id SERIAL PRIMARY KEY, key TEXT NOT NULL)`);
        const handler = new IdempotencyHandler(store, undefined, { storeTimeoutMs: 10_000 });
        const scope = (key: string) => ({ operation: "payments:create", userId: key, key, payload: { amount: 10 } });
        const insert = (tx: { query(text: string, params: unknown[]): Promise<unknown> }, key: string) =>
          tx.query(`INSERT INTO ${writes} (key) VALUES ($1)`, [key]);

        let secondInside!: () => void;
        const secondWrote = new Promise<void>((resolve) => (secondInside = resolve));
        let second: Promise<unknown> | undefined;
        let refusal: unknown;
        const first = handler.executeInTransaction(scope("first"), async ({ tx }) => {
          await insert(tx, "first");
          try {
            (tx as unknown as { release(): void }).release();
          } catch (err) {
            refusal = err;
          }
          // Another user's payment, declined after its write.
          second = handler.executeInTransaction(
            scope("second"),
            async ({ tx: tx2 }) => {
              await insert(tx2, "second");
              secondInside();
              await new Promise((resolve) => setTimeout(resolve, 200));
              throw new Declined("card declined");
            },
            { isPermanentError: (err) => err instanceof Declined },
          );
          second.catch(() => {});
          // With the connection released, the second request runs on it before this one commits.
          await Promise.race([secondWrote, new Promise((resolve) => setTimeout(resolve, 300))]);
          return { paid: true };
        });
        await first.catch(() => {});
        await second?.catch(() => {});
        const rows = async (sql: string, key: string) => (await pool.query(sql, [key])).rows;
        expect(await rows(`SELECT key FROM ${writes} WHERE key = $1`, "second")).toEqual([]);
        expect(await rows(`SELECT status FROM ${table} WHERE key = $1`, "second")).toEqual([{ status: "FAILED" }]);
        expect(await rows(`SELECT status FROM ${table} WHERE key = $1`, "first")).toEqual([{ status: "SUCCESS" }]);
        expect(refusal).toMatchObject(REFUSED);
        await expect(second).rejects.toBeInstanceOf(Declined);
      } finally {
        await pool.query(`DROP TABLE IF EXISTS ${writes}`);
        await dropTables(pool, table);
        await pool.end();
      }
    },
  );
});
