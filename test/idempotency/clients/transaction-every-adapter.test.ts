// `transaction: true` on every adapter that takes it (Express, Fastify, Hono, Koa, NestJS, fetch), over PostgreSQL,
// MySQL / MariaDB and SQLite: the route's writes go through ctx.tx and commit with the record, or not at all; a request
// without a key is refused rather than run outside a transaction; a SIGKILL before COMMIT leaves nothing.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { recordingLogger } from "@/blocks/idempotency/testing/recorders";
import { SERVICE_START_TIMEOUT_MS, uniqueTableName } from "../support/services";
import { ADAPTERS, transactionalApps, type Queryable, type TransactionalApp } from "./support/transactional-apps";
import {
  openTransactionalClient,
  transactionalKinds,
  type Observer,
  type OpenedTransactionalClient,
  type TransactionalClientName,
} from "./support/transactional-kinds";

const COMMITTED = "idempotency: executed and committed the response with the operation's writes";
/** One client per database: the adapters are what this suite varies (transactional.test.ts varies the clients). */
const CLIENTS: TransactionalClientName[] = ["pglite", "pg-pool", "mysql2-pool", "better-sqlite3", "libsql"];

for (const kind of transactionalKinds.filter((k) => CLIENTS.includes(k.client))) {
  describe(`transaction: true on every adapter (${kind.name})`, { timeout: 30_000 }, () => {
    let opened: OpenedTransactionalClient;
    let observer: Observer;
    let table: string;
    let writes: string;
    let logger: ReturnType<typeof recordingLogger>;
    let handler: IdempotencyHandler<Queryable>;
    let app: TransactionalApp | undefined;
    const writesOf = (key: string) => observer.writesOf(writes, key);
    const recordOf = (key: string) => observer.recordOf(table, key);
    const committedLines = () => logger.lines.filter((line) => line.msg === COMMITTED);

    beforeAll(async () => {
      opened = await openTransactionalClient(kind.client, kind.location);
      observer = await kind.observer(opened);
    }, SERVICE_START_TIMEOUT_MS);
    afterAll(async () => {
      await opened?.close();
      await observer?.close();
    });
    beforeEach(async () => {
      table = uniqueTableName("tx_every");
      writes = `${table}_writes`;
      logger = recordingLogger();
      const store = opened.store(table);
      await store.createSchema();
      await observer.createWrites(writes);
      handler = new IdempotencyHandler(store, undefined, { logger }) as IdempotencyHandler<Queryable>;
    });
    afterEach(async () => {
      await app?.close();
      app = undefined;
      await observer.dropAll(table, writes);
    });

    for (const adapter of ADAPTERS) {
      // Finding "A promise the code does not keep": fetch (and Koa, NestJS) accepted `transaction: true`, ran the record in a
      // transaction, handed the route none, and logged that the route's writes committed with the response.
      it(`${adapter}: a promise the code does not keep: the route writes on ctx.tx, the write and the record commit in one transaction, and only then the log says so`, async () => {
        let runs = 0;
        app = await transactionalApps[adapter](handler, async (tx, key, amount) => {
          await opened.write(tx, writes, key);
          return { status: 201, body: { key, amount, run: ++runs } };
        });
        const first = await app.post("o-1", { amount: 5 });
        expect(first.status).toBe(201);
        expect(await recordOf("o-1")).toMatchObject({ status: "SUCCESS" });
        // PostgreSQL names the transaction that wrote each row: the route's write is in the record's.
        if (observer.transactionIds) {
          const [record, write] = await observer.transactionIds(table, writes, "o-1");
          expect(write).toBe(record);
        }
        expect(committedLines()).toHaveLength(1);
        const retry = await app.post("o-1", { amount: 5 });
        expect(retry).toEqual(first);
        expect(runs).toBe(1);
        expect(await writesOf("o-1")).toBe(1);
      });

      it(`${adapter}: the operation fails after its write: nothing of it remains; a thrown error frees the key, a 422 fails it; no line claims a commit`, async () => {
        app = await transactionalApps[adapter](handler, async (tx, key, amount) => {
          await opened.write(tx, writes, key);
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
          expect.arrayContaining([
            "idempotency: transient failure, writes rolled back, key free for retry",
            "idempotency: permanent failure, writes rolled back, key marked FAILED",
          ]),
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

      it.skipIf(kind.inProcess)(
        `${adapter}: SIGKILL after the route's write and before COMMIT leaves neither the write nor the record, logs no commit, and the retry runs once`,
        async () => {
          const child = fork(
            fileURLToPath(new URL("./support/killed-http-transaction.ts", import.meta.url)),
            [adapter, kind.client, kind.location, table, writes, "o-kill"],
            {
              execArgv: ["--import", "tsx"],
              stdio: ["ignore", "pipe", "pipe", "ipc"],
            },
          );
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
          app = await transactionalApps[adapter](handler, async (tx, key) => {
            await opened.write(tx, writes, key);
            return { status: 201, body: { key } };
          });
          // The server aborts the dead connection's transaction; until then the retry waits on its row lock.
          expect((await app.post("o-kill", { amount: 10 })).status).toBe(201);
          expect(await writesOf("o-kill")).toBe(1);
          expect(await recordOf("o-kill")).toMatchObject({ status: "SUCCESS" });
        },
        60_000,
      );
    }
  });
}
