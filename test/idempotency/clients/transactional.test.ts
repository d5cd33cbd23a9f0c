// executeInTransaction on every client adapter of every dialect (PostgreSQL, MySQL / MariaDB, SQLite): one commit per
// first request, rollbacks, races, lock waits, the guard and a SIGKILL inside the transaction.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { UnkeptAnswer } from "@/blocks/idempotency/unkept-answer";
import { SERVICE_START_TIMEOUT_MS, uniqueTableName } from "../support/services";
import {
  openTransactionalClient,
  transactionalKinds,
  type Observer,
  type OpenedTransactionalClient,
} from "./support/transactional-kinds";

class Declined extends Error {}
class ProviderTimeout extends Error {}

/** Counts what reaches the database as commits: statements run outside a transaction, and transactions that committed. */
function counter() {
  const counts = { autocommitStatements: 0, committedTransactions: 0 };
  const wrap = <C extends object>(client: C): C =>
    new Proxy(client, {
      get(target, name) {
        const value = Reflect.get(target, name, target) as unknown;
        if (typeof value !== "function") return value;
        if (name !== "transaction")
          return (...args: unknown[]) => (
            counts.autocommitStatements++,
            (value as (...a: unknown[]) => unknown).apply(target, args)
          );
        return async (...args: unknown[]) => {
          const result: unknown = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          counts.committedTransactions++;
          return result;
        };
      },
    });
  return { counts, wrap, commits: () => counts.autocommitStatements + counts.committedTransactions };
}

/** A member of the transaction object by its dotted path (`queryRunner.release`), called on its owner. */
function callMember(tx: unknown, path: string): unknown {
  const names = path.split(".");
  const owner = names.slice(0, -1).reduce((object, name) => (object as Record<string, unknown>)[name], tx) as Record<
    string,
    () => unknown
  >;
  return owner[names.at(-1) as string]?.();
}

for (const kind of transactionalKinds) {
  describe(`executeInTransaction: ${kind.name}`, { timeout: 60_000 }, () => {
    let opened: OpenedTransactionalClient;
    let observer: Observer;
    let counting: ReturnType<typeof counter>;
    let table: string;
    let writes: string;
    let handler: IdempotencyHandler<unknown>;
    let n = 0;
    const context = (key = `k-${++n}`) => ({ operation: "orders:create", userId: "u_1", key, payload: { amount: 10 } });
    const writesOf = (key: string) => observer.writesOf(writes, key);
    const recordOf = (key: string) => observer.recordOf(table, key);
    const retryCountOf = (key: string) => observer.retryCount(table, key);
    /** The business write, in the client's own idiom on the transaction it was handed. */
    const order =
      (key: string, result: unknown = { orderId: key }) =>
      async ({ tx }: { tx: unknown }) => {
        await opened.write(tx, writes, key);
        return result;
      };

    beforeAll(async () => {
      opened = await openTransactionalClient(kind.client, kind.location);
      observer = await kind.observer(opened);
    }, SERVICE_START_TIMEOUT_MS);
    afterAll(async () => {
      await opened?.close();
      await observer?.close();
    });
    beforeEach(async () => {
      table = uniqueTableName("tx");
      writes = `${table}_writes`;
      counting = counter();
      const store = opened.store(table, counting.wrap);
      await store.createSchema();
      await observer.createWrites(writes);
      handler = new IdempotencyHandler(store, undefined, { maxRetries: 2, storeTimeoutMs: 10_000 });
      counting.counts.autocommitStatements = 0;
    });
    afterEach(async () => observer.dropAll(table, writes));

    it("commits the record, the writes and the result in one transaction: one commit for a first request", async () => {
      const { key } = context();
      const seenInside: unknown[] = [];
      const result = await handler.executeInTransaction(context(key), async (ctx) => {
        await opened.write(ctx.tx, writes, key);
        // Another connection sees neither the record nor the write before the commit (PGlite has no other connection).
        if (observer.separate) seenInside.push(await recordOf(key), await writesOf(key));
        return { orderId: 42 };
      });
      expect(result).toEqual({ response: { orderId: 42 }, replayed: false });
      expect(seenInside).toEqual(observer.separate ? [undefined, 0] : []);
      expect(counting.commits()).toBe(1);
      expect(await writesOf(key)).toBe(1);
      expect(await recordOf(key)).toMatchObject({ status: "SUCCESS", response: '{"orderId":42}' });
    });

    it.runIf(kind.dialect === "postgres")(
      "PostgreSQL: the record and the write carry the same transaction id: they committed together",
      async () => {
        const { key } = context();
        await handler.executeInTransaction(context(key), order(key));
        const [record, write] = await (observer.transactionIds as NonNullable<Observer["transactionIds"]>)(
          table,
          writes,
          key,
        );
        expect(record).toBeDefined();
        expect(write).toBe(record);
      },
    );

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
      await expect(
        handler.executeInTransaction(context(key), failing, { isPermanentError: (err) => err instanceof Declined }),
      ).rejects.toBe(declined);
      expect(await writesOf(key)).toBe(0);
      expect(await recordOf(key)).toMatchObject({ status: "FAILED" });
      await expect(handler.executeInTransaction(context(key), order(key))).rejects.toMatchObject({
        code: "REQUEST_FAILED",
      });
      expect(await writesOf(key)).toBe(0);
    });

    it("an UnkeptAnswer: the writes roll back, the key is FAILED keeping its failureResponse, and the answer comes back", async () => {
      const { key } = context();
      const declined = new UnkeptAnswer(
        { status: 402 },
        "permanent",
        { name: "Declined", message: "card declined" },
        {
          status: 402,
        },
      );
      const answering = async ({ tx }: { tx: unknown }) => {
        await opened.write(tx, writes, key);
        return declined;
      };
      expect(await handler.executeInTransaction(context(key), answering)).toEqual({
        response: declined,
        replayed: false,
      });
      expect(await writesOf(key)).toBe(0);
      expect(await recordOf(key)).toMatchObject({ status: "FAILED" });
      await expect(handler.executeInTransaction(context(key), order(key))).rejects.toMatchObject({
        code: "REQUEST_FAILED",
        response: { status: 402 },
      });
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
      await expect(handler.executeInTransaction(context(key), order(key))).rejects.toMatchObject({
        code: "REQUEST_FAILED",
      });
      expect(await writesOf(key)).toBe(0);
    });

    it("a transient failure then a retry: the retry runs once and commits", async () => {
      const { key } = context();
      await expect(
        handler.executeInTransaction(context(key), async () => Promise.reject(new ProviderTimeout("once"))),
      ).rejects.toThrow("once");
      expect(await handler.executeInTransaction(context(key), order(key))).toEqual({
        response: { orderId: key },
        replayed: false,
      });
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
      const settled = await Promise.allSettled(
        Array.from({ length: 20 }, () =>
          handler.executeInTransaction(context(key), slowOrder, { lockTimeoutMs: 5_000 }),
        ),
      );
      expect(ran).toBe(1);
      expect(await writesOf(key)).toBe(1);
      const fulfilled = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
      expect(fulfilled.filter((r) => !r.replayed)).toHaveLength(1);
      for (const r of fulfilled) expect(r.response).toEqual({ orderId: key });
      for (const s of settled)
        if (s.status === "rejected") expect(s.reason).toMatchObject({ code: "REQUEST_IN_PROGRESS" });
    });

    it("10 concurrent requests with one key whose first run fails transiently: its writes roll back and at most one other runs", async () => {
      const { key } = context();
      let ran = 0;
      const firstFails = async ({ tx }: { tx: unknown }) => {
        const run = ++ran;
        await opened.write(tx, writes, key);
        await new Promise((resolve) => setTimeout(resolve, 100));
        if (run === 1) throw new ProviderTimeout("first run");
        return { orderId: key };
      };
      const settled = await Promise.allSettled(
        Array.from({ length: 10 }, () =>
          handler.executeInTransaction(context(key), firstFails, { lockTimeoutMs: 5_000 }),
        ),
      );
      // The waiters race for the freed key; InnoDB may deadlock two of them (REQUEST_IN_PROGRESS), never run two.
      expect(ran).toBeLessThanOrEqual(2);
      expect(await writesOf(key)).toBe(ran - 1);
      for (const s of settled) {
        if (s.status === "rejected" && !(s.reason instanceof ProviderTimeout))
          expect(s.reason).toMatchObject({ code: "REQUEST_IN_PROGRESS" });
      }
    });

    it.skipIf(kind.oneConnection)(
      "a duplicate waits at most lockTimeoutMs for the first transaction's lock, gets REQUEST_IN_PROGRESS, and replays once the first commits",
      async () => {
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
        // InnoDB's lock wait counts whole seconds: 200 ms waits one second.
        await expect(
          handler.executeInTransaction(context(key), order(key), { lockTimeoutMs: 200 }),
        ).rejects.toMatchObject({ code: "REQUEST_IN_PROGRESS" });
        expect(performance.now() - started).toBeLessThan(5_000);
        release();
        expect(await first).toEqual({ response: { orderId: key }, replayed: false });
        expect(await handler.executeInTransaction(context(key), order(key))).toEqual({
          response: { orderId: key },
          replayed: true,
        });
        expect(await writesOf(key)).toBe(1);
      },
    );

    it.runIf(kind.dialect === "mysql" && kind.oneConnection)(
      "MySQL: puts the session's innodb_lock_wait_timeout back after the transaction",
      async () => {
        const store = opened.store(table) as unknown as {
          client: { query(sql: string): Promise<[Array<{ wait: number }>, unknown]> };
        };
        const sessionWait = async () =>
          Number((await store.client.query("SELECT @@SESSION.innodb_lock_wait_timeout AS wait"))[0][0]?.wait);
        const before = await sessionWait();
        await handler.executeInTransaction(context(), order(`w-${n}`), { lockTimeoutMs: 3_000 });
        await expect(
          handler.executeInTransaction(context(), async () => Promise.reject(new Declined("no")), {
            lockTimeoutMs: 3_000,
          }),
        ).rejects.toThrow("no");
        expect(await sessionWait()).toBe(before);
      },
    );

    it("the guard: text that ends the transaction is refused before it reaches the database, and nothing commits", async () => {
      const refused = [
        "COMMIT",
        "rollback",
        "/* settle */ commit",
        "BEGIN",
        "insert into x values (1); commit",
        ...(kind.dialect === "mysql"
          ? [
              "CREATE TABLE other (id INT)",
              "TRUNCATE orders",
              "LOCK TABLES orders WRITE",
              "/*!COMMIT*/",
              "SET autocommit = 1",
            ]
          : []),
      ];
      for (const text of refused) {
        const { key } = context();
        await expect(
          handler.executeInTransaction(context(key), async ({ tx }) => {
            await opened.write(tx, writes, key);
            await opened.raw(tx, text);
            return {};
          }),
        ).rejects.toMatchObject({ code: "TRANSACTION_CONTROL_REFUSED" });
        expect(await writesOf(key)).toBe(0);
        expect(await recordOf(key)).toBeUndefined();
      }
      for (const member of opened.escapes) {
        const { key } = context();
        await expect(
          handler.executeInTransaction(context(key), async ({ tx }) => {
            await opened.write(tx, writes, key);
            return callMember(tx, member);
          }),
        ).rejects.toMatchObject({ code: "TRANSACTION_CONTROL_REFUSED" });
        expect(await writesOf(key)).toBe(0);
      }
    });

    it("the guard lets savepoints through (and MySQL's temporary tables, which commit nothing)", async () => {
      const { key } = context();
      const result = await handler.executeInTransaction(context(key), async ({ tx }) => {
        await opened.raw(tx, "SAVEPOINT before_write");
        await opened.write(tx, writes, key);
        await opened.raw(tx, "ROLLBACK TO SAVEPOINT before_write");
        await opened.write(tx, writes, key);
        if (kind.dialect === "mysql") await opened.raw(tx, "CREATE TEMPORARY TABLE scratch_rows (id INT)");
        if (kind.dialect === "mysql") await opened.raw(tx, "DROP TEMPORARY TABLE scratch_rows");
        return { ok: true };
      });
      expect(result).toEqual({ response: { ok: true }, replayed: false });
      expect(await writesOf(key)).toBe(1);
    });

    it.skipIf(kind.inProcess)(
      "SIGKILL inside the transaction leaves neither record nor writes; the retry executes exactly once",
      async () => {
        const { key } = context();
        const child = fork(
          fileURLToPath(new URL("./support/killed-in-transaction.ts", import.meta.url)),
          [kind.client, kind.location, table, writes, key],
          {
            execArgv: ["--import", "tsx"],
            stdio: ["ignore", "ignore", "pipe", "ipc"],
          },
        );
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
        expect(await handler.executeInTransaction(context(key), order(key), { lockTimeoutMs: 10_000 })).toEqual({
          response: { orderId: key },
          replayed: false,
        });
        expect(await writesOf(key)).toBe(1);
        expect(await recordOf(key)).toMatchObject({ status: "SUCCESS" });
        expect(await retryCountOf(key)).toBe(0);
      },
    );
  });
}
