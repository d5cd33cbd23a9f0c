// executeInTransaction over every client adapter: one commit per first request, rollbacks, races and a SIGKILL inside the transaction.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { PostgresStore, type SqlClient, type TransactionalSqlClient } from "@/blocks/idempotency/stores/postgres-store";
import { clientKinds, type OpenedClient } from "../support/client-harness";
import { dropTables, SERVICE_START_TIMEOUT_MS, uniqueTableName } from "../support/services";

class Declined extends Error {}
class ProviderTimeout extends Error {}

/** Counts what reaches the database as commits: statements run outside a transaction, and transactions that committed. */
function countingClient<Tx>(client: TransactionalSqlClient<Tx>) {
  const counts = { autocommitStatements: 0, committedTransactions: 0 };
  const counted: TransactionalSqlClient<Tx> = {
    query: (text, params) => (counts.autocommitStatements++, client.query(text, params)),
    transaction: async (work) => {
      const result = await client.transaction(work);
      counts.committedTransactions++;
      return result;
    },
  };
  return { counts, client: counted, commits: () => counts.autocommitStatements + counts.committedTransactions };
}

for (const kind of clientKinds) {
  describe(`executeInTransaction: ${kind.name}`, { timeout: 60_000 }, () => {
    let opened: OpenedClient<unknown>;
    let counting: ReturnType<typeof countingClient<unknown>>;
    let sql: SqlClient;
    let table: string;
    let writes: string;
    let handler: IdempotencyHandler<unknown>;
    let n = 0;
    const context = (key = `k-${++n}`) => ({ operation: "orders:create", userId: "u_1", key, payload: { amount: 10 } });
    const writesOf = async (key: string) => Number(((await sql.query(`SELECT count(*)::int AS n FROM ${writes} WHERE key = $1`, [key])).rows[0] as { n: number }).n);
    const recordOf = async (key: string) =>
      (await sql.query(`SELECT status, response, xmin::text AS xid FROM ${table} WHERE key = $1`, [key])).rows[0] as
        | { status: string; response: string | null; xid: string }
        | undefined;
    const retryCountOf = async (key: string) =>
      ((await sql.query(`SELECT retry_count FROM ${table}_retries WHERE key = $1`, [key])).rows[0] as { retry_count: number } | undefined)?.retry_count ?? 0;
    /** The business write, in the client's own idiom on the transaction it was handed. */
    const order = (key: string, result: unknown = { orderId: key }) => async ({ tx }: { tx: unknown }) => {
      await opened.write(tx, writes, key);
      return result;
    };

    beforeAll(async () => {
      opened = await kind.open();
      sql = opened.client;
    }, SERVICE_START_TIMEOUT_MS);
    afterAll(async () => opened?.close());
    beforeEach(async () => {
      table = uniqueTableName("tx");
      writes = `${table}_writes`;
      counting = countingClient(opened.client);
      const store = new PostgresStore(counting.client, { table });
      await store.createSchema();
      await sql.query(`CREATE TABLE ${writes} (id SERIAL PRIMARY KEY, key TEXT NOT NULL)`);
      handler = new IdempotencyHandler(store, undefined, { maxRetries: 2, storeTimeoutMs: 10_000 });
      counting.counts.autocommitStatements = 0;
    });
    afterEach(async () => {
      await sql.query(`DROP TABLE IF EXISTS ${writes}`);
      await dropTables(sql, table);
    });

    it("commits the record, the writes and the result in one transaction: one commit for a first request", async () => {
      const { key } = context();
      const result = await handler.executeInTransaction(context(key), order(key, { orderId: 42 }));
      expect(result).toEqual({ response: { orderId: 42 }, replayed: false });
      expect(counting.commits()).toBe(1);
      expect(await writesOf(key)).toBe(1);
      const record = await recordOf(key);
      expect(record).toMatchObject({ status: "SUCCESS", response: '{"orderId":42}' });
      // The same transaction id on the record and the write: they committed together.
      const { rows } = await sql.query(`SELECT xmin::text AS xid FROM ${writes} WHERE key = $1`, [key]);
      expect((rows[0] as { xid: string }).xid).toBe(record?.xid);
    });

    it("replays without running the operation or writing anything", async () => {
      const { key } = context();
      await handler.executeInTransaction(context(key), order(key));
      let ran = 0;
      const replay = await handler.executeInTransaction(context(key), async (ctx) => (ran++, order(key)(ctx)));
      expect(replay).toEqual({ response: { orderId: key }, replayed: true });
      expect(ran).toBe(0);
      expect(await writesOf(key)).toBe(1);
    });

    it("permanent error: the writes roll back and the key is recorded FAILED", async () => {
      const { key } = context();
      const declined = new Declined("card declined");
      const failing = async ({ tx }: { tx: unknown }) => {
        await opened.write(tx, writes, key);
        throw declined;
      };
      await expect(handler.executeInTransaction(context(key), failing, { isPermanentError: (err) => err instanceof Declined })).rejects.toBe(declined);
      expect(await writesOf(key)).toBe(0);
      expect(await recordOf(key)).toMatchObject({ status: "FAILED" });
      await expect(handler.executeInTransaction(context(key), order(key))).rejects.toMatchObject({ code: "REQUEST_FAILED" });
      expect(await writesOf(key)).toBe(0);
    });

    it("transient error: the writes roll back, the retry counter rises and the key is free; poisoned at maxRetries", async () => {
      const { key } = context();
      const timeout = new ProviderTimeout("provider timed out");
      const failing = async ({ tx }: { tx: unknown }) => {
        await opened.write(tx, writes, key);
        throw timeout;
      };
      await expect(handler.executeInTransaction(context(key), failing)).rejects.toBe(timeout);
      expect(await writesOf(key)).toBe(0);
      expect(await recordOf(key)).toBeUndefined();
      expect(await retryCountOf(key)).toBe(1);
      // maxRetries is 2: the second transient failure poisons the key (and still rejects with its own error).
      await expect(handler.executeInTransaction(context(key), failing)).rejects.toBe(timeout);
      expect(await recordOf(key)).toMatchObject({ status: "FAILED" });
      await expect(handler.executeInTransaction(context(key), order(key))).rejects.toMatchObject({ code: "REQUEST_FAILED" });
      expect(await writesOf(key)).toBe(0);
    });

    it("a transient failure then a retry: the retry runs once and commits", async () => {
      const { key } = context();
      await expect(handler.executeInTransaction(context(key), async () => Promise.reject(new ProviderTimeout("once")))).rejects.toThrow("once");
      expect(await handler.executeInTransaction(context(key), order(key))).toEqual({ response: { orderId: key }, replayed: false });
      expect(await writesOf(key)).toBe(1);
    });

    it("20 concurrent requests with one key: one set of writes; every other caller replays or gets REQUEST_IN_PROGRESS", async () => {
      const { key } = context();
      let ran = 0;
      const slowOrder = async ({ tx }: { tx: unknown }) => {
        ran++;
        await opened.write(tx, writes, key);
        await new Promise((resolve) => setTimeout(resolve, 100));
        return { orderId: key };
      };
      const settled = await Promise.allSettled(Array.from({ length: 20 }, () => handler.executeInTransaction(context(key), slowOrder, { lockTimeoutMs: 5_000 })));
      expect(ran).toBe(1);
      expect(await writesOf(key)).toBe(1);
      const fulfilled = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
      expect(fulfilled.filter((r) => !r.replayed)).toHaveLength(1);
      for (const r of fulfilled) expect(r.response).toEqual({ orderId: key });
      for (const s of settled) if (s.status === "rejected") expect(s.reason).toMatchObject({ code: "REQUEST_IN_PROGRESS" });
    });

    it.skipIf(kind.oneConnection)("a duplicate waits at most lockTimeoutMs, gets REQUEST_IN_PROGRESS, and replays once the first commits", async () => {
      const { key } = context();
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let inside!: () => void;
      const entered = new Promise<void>((resolve) => (inside = resolve));
      const first = handler.executeInTransaction(context(key), async ({ tx }) => {
        await opened.write(tx, writes, key);
        inside();
        await held;
        return { orderId: key };
      });
      await entered;
      const started = performance.now();
      await expect(handler.executeInTransaction(context(key), order(key), { lockTimeoutMs: 200 })).rejects.toMatchObject({ code: "REQUEST_IN_PROGRESS" });
      expect(performance.now() - started).toBeLessThan(5_000);
      release();
      expect(await first).toEqual({ response: { orderId: key }, replayed: false });
      expect(await handler.executeInTransaction(context(key), order(key))).toEqual({ response: { orderId: key }, replayed: true });
      expect(await writesOf(key)).toBe(1);
    });

    it.skipIf(kind.database === "pglite")("SIGKILL inside the transaction leaves neither record nor writes; the retry executes exactly once", async () => {
      const { key } = context();
      const child = fork(fileURLToPath(new URL("./support/killed-in-transaction.ts", import.meta.url)), [kind.client, table, writes, key], {
        execArgv: ["--import", "tsx"],
        stdio: ["ignore", "ignore", "pipe", "ipc"],
      });
      let stderr = "";
      child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise((resolve) => child.once("exit", resolve));
      await new Promise<void>((resolve, reject) => {
        child.once("message", () => resolve());
        void exited.then(() => reject(new Error(`child exited before writing:\n${stderr}`)));
      });
      child.kill("SIGKILL");
      await exited;
      expect(await recordOf(key)).toBeUndefined();
      expect(await writesOf(key)).toBe(0);
      // The server aborts the dead connection's transaction; the retry waits for its locks (lockTimeoutMs) if it must.
      expect(await handler.executeInTransaction(context(key), order(key), { lockTimeoutMs: 10_000 })).toEqual({ response: { orderId: key }, replayed: false });
      expect(await writesOf(key)).toBe(1);
      expect(await recordOf(key)).toMatchObject({ status: "SUCCESS" });
      expect(await retryCountOf(key)).toBe(0);
    });
  });
}
