// `transaction: true` on every adapter that takes it, over MySqlStore (MYSQL_URL) and SqliteStore: the route's write on
// ctx.tx commits with the record, a replay runs nothing, and a failing route leaves nothing of its write.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { recordingLogger } from "@/blocks/idempotency/testing/recorders";
import { uniqueTableName } from "../support/services";
import { dialectKinds, openDialectClient, type Observer, type OpenedDialectClient } from "./support/dialect-clients";
import { ADAPTERS, transactionalApps, type Queryable, type TransactionalApp } from "./support/transactional-apps";

const COMMITTED = "idempotency: executed and committed the response with the operation's writes";

for (const kind of dialectKinds.filter((k) => k.client !== "mysql2-connection")) {
  describe(`transaction: true on every adapter (${kind.name})`, { timeout: 30_000 }, () => {
    let opened: OpenedDialectClient;
    let observer: Observer;
    let table: string;
    let writes: string;
    let logger: ReturnType<typeof recordingLogger>;
    let handler: IdempotencyHandler<Queryable>;
    let app: TransactionalApp | undefined;
    const writesOf = async (key: string) => Number((await observer.rows(`SELECT COUNT(*) AS n FROM ${writes} WHERE \`key\` = ?`, [key]))[0]?.n);
    const recordOf = async (key: string) => (await observer.rows(`SELECT status FROM ${table} WHERE \`key\` = ?`, [key]))[0];
    const committedLines = () => logger.lines.filter((line) => line.msg === COMMITTED);

    beforeAll(async () => {
      opened = await openDialectClient(kind.client, kind.location);
      observer = await kind.observer();
    });
    afterAll(async () => {
      await opened?.close();
      await observer?.close();
    });
    beforeEach(async () => {
      table = uniqueTableName("tx_http");
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
      it(`${adapter}: the route writes on ctx.tx, the write and the record commit together, and a retry replays without running`, async () => {
        let runs = 0;
        app = await transactionalApps[adapter](handler, async (tx, key, amount) => {
          await opened.write(tx, writes, key);
          return { status: 201, body: { key, amount, run: ++runs } };
        });
        const first = await app.post("o-1", { amount: 5 });
        expect(first.status).toBe(201);
        expect(await recordOf("o-1")).toMatchObject({ status: "SUCCESS" });
        expect(committedLines()).toHaveLength(1);
        expect(await app.post("o-1", { amount: 5 })).toEqual(first);
        expect(runs).toBe(1);
        expect(await writesOf("o-1")).toBe(1);
      });

      it(`${adapter}: the route fails after its write: nothing of it remains; a thrown error frees the key, a 422 fails it`, async () => {
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
      });
    }
  });
}
