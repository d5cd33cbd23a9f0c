// handler.consume / consumeInTransaction: one run per (source, message id), dead messages to onDead once, scopes apart from HTTP.
import { Hono } from "hono";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { idempotent } from "@/blocks/idempotency/adapters/hono";
import { inboxScope, type InboxMessage } from "@/blocks/idempotency/consume";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import { PostgresStore } from "@/blocks/idempotency/stores/postgres-store";
import { pgClient } from "@/blocks/idempotency/stores/clients/pg";
import { deferred, outcome } from "@/blocks/idempotency/testing/deferred";
import { recordingLogger, recordingMetrics } from "@/blocks/idempotency/testing/recorders";
import { dropTables, uniqueTableName } from "./support/services";

class Declined extends Error {}
const isPermanentError = (err: unknown) => err instanceof Declined;
const message = (messageId = "evt_1", payload: unknown = { type: "charge.succeeded", amount: 1200 }): InboxMessage => ({
  source: "stripe",
  messageId,
  payload,
});

function setup(maxRetries = 3) {
  const logger = recordingLogger();
  const metrics = recordingMetrics();
  const handler = new IdempotencyHandler(new MemoryStore(), undefined, { logger, metrics, maxRetries });
  const dead: Array<[InboxMessage, unknown]> = [];
  const onDead = (m: InboxMessage, err: unknown) => void dead.push([m, err]);
  return { handler, logger, metrics, dead, onDead };
}

describe("handler.consume", () => {
  it("runs a message once: a redelivery is a duplicate with the stored response", async () => {
    const { handler } = setup();
    let runs = 0;
    const first = await handler.consume(message(), () => ({ applied: ++runs }));
    const again = await handler.consume(message(), () => ({ applied: ++runs }));
    expect([first, again, runs]).toEqual([
      { outcome: "processed", response: { applied: 1 } },
      { outcome: "duplicate", response: { applied: 1 } },
      1,
    ]);
  });

  it("a transient failure rejects (redeliver) and the next delivery runs again, then succeeds", async () => {
    const { handler, dead, onDead } = setup();
    let runs = 0;
    const fn = () => {
      if (++runs === 1) throw new Error("ECONNRESET");
      return "ok";
    };
    await expect(handler.consume(message(), fn, { onDead })).rejects.toThrow("ECONNRESET");
    expect(await handler.consume(message(), fn, { onDead })).toEqual({ outcome: "processed", response: "ok" });
    expect([runs, dead.length]).toEqual([2, 0]);
  });

  it("a permanent failure is dead at once: onDead once with the error, later deliveries dead without it", async () => {
    const { handler, dead, onDead, logger } = setup();
    let runs = 0;
    const fn = () => {
      runs++;
      throw new Declined("card declined");
    };
    const first = await handler.consume(message(), fn, { isPermanentError, onDead });
    const again = await handler.consume(message(), fn, { isPermanentError, onDead });
    expect(first).toMatchObject({ outcome: "dead", error: expect.any(Declined) });
    expect(again).toMatchObject({ outcome: "dead", error: { code: "REQUEST_FAILED" } });
    expect([runs, dead.length, dead[0]?.[0].messageId, (dead[0]?.[1] as Error).message]).toEqual([
      1,
      1,
      "evt_1",
      "card declined",
    ]);
    expect(logger.lines.filter((line) => line.level === "warn" && line.msg.includes("message dead"))).toHaveLength(1);
  });

  it("knows a message is dead from its own failure: no read of the store after it (one that fails then changes nothing)", async () => {
    const store = new MemoryStore();
    store.get = () => Promise.reject(new Error("reads are down"));
    const handler = new IdempotencyHandler(store, undefined, { logger: recordingLogger() });
    const dead: unknown[] = [];
    const fn = () => Promise.reject(new Declined("card declined"));
    const first = await handler.consume(message(), fn, { isPermanentError, onDead: (_, err) => void dead.push(err) });
    expect(first).toMatchObject({ outcome: "dead", error: expect.any(Declined) });
    expect(dead).toHaveLength(1);
  });

  it("out of budget (maxRetries transient failures) is dead: the delivery that spends the budget calls onDead", async () => {
    const { handler, dead, onDead } = setup(2);
    const fn = () => Promise.reject(new Error("timeout"));
    await expect(handler.consume(message(), fn, { onDead })).rejects.toThrow("timeout");
    expect(dead).toHaveLength(0);
    expect(await handler.consume(message(), fn, { onDead })).toMatchObject({
      outcome: "dead",
      error: { message: "timeout" },
    });
    expect(await handler.consume(message(), fn, { onDead })).toMatchObject({ outcome: "dead" });
    expect(dead).toHaveLength(1);
  });

  it("onDead that throws is retried by the next delivery (at least once), never after one resolved", async () => {
    const { handler } = setup();
    const calls: string[] = [];
    const onDead = () => {
      calls.push("onDead");
      if (calls.length === 1) throw new Error("dead-letter table down");
    };
    const fn = () => Promise.reject(new Declined("no"));
    await expect(handler.consume(message(), fn, { isPermanentError, onDead })).rejects.toThrow(
      "dead-letter table down",
    );
    expect(await handler.consume(message(), fn, { isPermanentError, onDead })).toMatchObject({
      outcome: "dead",
      error: { code: "REQUEST_FAILED" },
    });
    expect(await handler.consume(message(), fn, { isPermanentError, onDead })).toMatchObject({ outcome: "dead" });
    expect(calls).toEqual(["onDead", "onDead"]);
  });

  it("onDead failing every time is given up after maxRetries: the message is acknowledged as dead, logged at error", async () => {
    const { handler, logger } = setup(2);
    let calls = 0;
    const onDead = () => Promise.reject(new Error(`down ${++calls}`));
    const fn = () => Promise.reject(new Declined("no"));
    await expect(handler.consume(message(), fn, { isPermanentError, onDead })).rejects.toThrow("down 1");
    await expect(handler.consume(message(), fn, { isPermanentError, onDead })).rejects.toThrow("down 2");
    expect(await handler.consume(message(), fn, { isPermanentError, onDead })).toMatchObject({ outcome: "dead" });
    expect(calls).toBe(2);
    expect(logger.lines.some((line) => line.level === "error" && line.msg.includes("onDead kept failing"))).toBe(true);
  });

  it("concurrent deliveries of one id run once: the other is told REQUEST_IN_PROGRESS (redeliver)", async () => {
    const { handler } = setup();
    const gate = deferred();
    let runs = 0;
    const fn = async () => {
      runs++;
      await gate.promise;
      return "done";
    };
    const first = handler.consume(message(), fn);
    const second = await outcome(handler.consume(message(), fn));
    gate.resolve();
    expect([await first, second.ok ? "ran" : second.code, runs]).toEqual([
      { outcome: "processed", response: "done" },
      "REQUEST_IN_PROGRESS",
      1,
    ]);
  });

  it("the same id with another payload runs nothing: KEY_REUSED_WITH_DIFFERENT_REQUEST, logged and counted", async () => {
    const { handler, metrics, dead, onDead } = setup();
    await handler.consume(message("evt_1", { amount: 1 }), () => "first");
    let ran = false;
    const conflict = await outcome(handler.consume(message("evt_1", { amount: 2 }), () => (ran = true), { onDead }));
    expect([conflict.ok ? "ran" : conflict.code, ran, dead.length]).toEqual([
      "KEY_REUSED_WITH_DIFFERENT_REQUEST",
      false,
      0,
    ]);
    expect(metrics.total("conflicts", { operation: "consume:stripe" })).toBe(1);
  });

  it.each([
    [{ source: "stripe", messageId: undefined }, "IDEMPOTENCY_KEY_INVALID"],
    [{ source: "stripe", messageId: "" }, "IDEMPOTENCY_KEY_INVALID"],
    [{ source: "stripe", messageId: "x".repeat(256) }, "IDEMPOTENCY_KEY_INVALID"],
    [{ source: "stripe", messageId: "évt" }, "IDEMPOTENCY_KEY_INVALID"],
  ])("refuses a message id that cannot be deduplicated (%j) and runs nothing", async (bad, code) => {
    const { handler, logger } = setup();
    let ran = false;
    const result = await outcome(handler.consume({ ...bad, payload: {} } as InboxMessage, () => (ran = true)));
    expect([result.ok ? "ran" : result.code, ran]).toEqual([code, false]);
    expect((result as { error: Error }).error.message).toMatch(/stripe message's id must be 1 to 255 visible ASCII/);
    expect(logger.lines.some((line) => line.level === "warn" && line.msg.includes("id is missing or malformed"))).toBe(
      true,
    );
  });

  it.each(["", "a:b", "has space", "x".repeat(65), 42])(
    "refuses a source that is not a short name (%j) with a TypeError",
    async (source) => {
      const { handler } = setup();
      await expect(handler.consume({ source, messageId: "m1", payload: {} } as InboxMessage, () => 1)).rejects.toThrow(
        /message `source` must be 1 to 64/,
      );
    },
  );

  it("keeps sources apart: one id from two senders runs twice", async () => {
    const { handler } = setup();
    let runs = 0;
    await handler.consume({ source: "stripe", messageId: "1", payload: {} }, () => ++runs);
    await handler.consume({ source: "orders", messageId: "1", payload: {} }, () => ++runs);
    expect(runs).toBe(2);
  });

  it("hands the operation execute's ctx, its key the message's scope", async () => {
    const { handler } = setup();
    const { response } = (await handler.consume(message(), (ctx) => ({
      key: ctx.key,
      aborted: ctx.signal.aborted,
    }))) as { response: unknown };
    expect(response).toEqual({ key: { operation: "consume:stripe", userId: "inbox", key: "evt_1" }, aborted: false });
  });
});

describe("consumer scopes never meet HTTP scopes", () => {
  it("a route's getOperation may not name a consumer scope (500, nothing runs)", async () => {
    const handler = new IdempotencyHandler(new MemoryStore());
    let runs = 0;
    const app = new Hono();
    app.post(
      "/hooks",
      idempotent(handler, {
        getUserId: () => "inbox",
        getOperation: () => "consume:stripe",
        run: () => ({ body: ++runs }),
      }),
    );
    const response = await app.request("/hooks", {
      method: "POST",
      headers: { "Idempotency-Key": "evt_1" },
      body: "{}",
    });
    expect([response.status, runs]).toEqual([500, 0]);
  });

  it("every default HTTP operation is '<METHOD> <path>': a method is an HTTP token, which has no ':'", async () => {
    const handler = new IdempotencyHandler(new MemoryStore());
    const seen: string[] = [];
    const app = new Hono();
    const methods = ["post", "put", "patch", "delete"] as const;
    for (const method of methods) {
      app[method](
        "/consume:stripe",
        idempotent(handler, {
          getUserId: () => "inbox",
          run: (_c, ctx) => (seen.push(ctx.key!.operation), { body: 1 }),
        }),
      );
    }
    for (const method of methods) {
      await app.request("/consume:stripe", {
        method: method.toUpperCase(),
        headers: { "Idempotency-Key": "evt_1" },
        body: "{}",
      });
    }
    expect(seen).toEqual([
      "POST /consume:stripe",
      "PUT /consume:stripe",
      "PATCH /consume:stripe",
      "DELETE /consume:stripe",
    ]);
    expect(
      seen.some((operation) => operation.startsWith(inboxScope("stripe", "evt_1").operation.split(":")[0] + ":")),
    ).toBe(false);
  });
});

const databaseUrl = process.env.DATABASE_URL;

describe.skipIf(!databaseUrl)("[DATABASE_URL] consumeInTransaction on PostgreSQL", () => {
  let pool: pg.Pool;
  let table: string;
  let handler: IdempotencyHandler<pg.PoolClient>;
  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: databaseUrl });
    table = uniqueTableName("inbox_tx");
    const store = new PostgresStore(pgClient(pool), { table });
    await store.createSchema();
    await pool.query(`CREATE TABLE ${table}_effects (message_id text PRIMARY KEY, amount int)`);
    handler = new IdempotencyHandler(store as never, undefined, { maxRetries: 2 });
  });
  afterAll(async () => {
    await pool.query(`DROP TABLE IF EXISTS ${table}_effects`);
    await dropTables(pool, table);
    await pool.end();
  });
  const effects = async (id: string) =>
    (await pool.query(`SELECT amount FROM ${table}_effects WHERE message_id = $1`, [id])).rows;
  const record = async (id: string) =>
    (await pool.query(`SELECT status FROM ${table} WHERE operation = 'consume:stripe' AND key = $1`, [id])).rows;

  it("commits the record and the writes together; a redelivery is a duplicate and writes nothing", async () => {
    const apply =
      (id: string) =>
      async ({ tx }: { tx: pg.PoolClient }) => {
        await tx.query(`INSERT INTO ${table}_effects VALUES ($1, 1200)`, [id]);
        return "applied";
      };
    expect(await handler.consumeInTransaction(message("tx_1"), apply("tx_1"))).toEqual({
      outcome: "processed",
      response: "applied",
    });
    expect(await handler.consumeInTransaction(message("tx_1"), apply("tx_1"))).toEqual({
      outcome: "duplicate",
      response: "applied",
    });
    expect([await effects("tx_1"), await record("tx_1")]).toEqual([[{ amount: 1200 }], [{ status: "SUCCESS" }]]);
  });

  it("a failure after the writes leaves neither the record nor the writes; the redelivery commits both", async () => {
    let attempt = 0;
    const fn = async ({ tx }: { tx: pg.PoolClient }) => {
      await tx.query(`INSERT INTO ${table}_effects VALUES ('tx_2', 1200)`);
      if (++attempt === 1) throw new Error("crash before commit");
      return "applied";
    };
    await expect(handler.consumeInTransaction(message("tx_2"), fn)).rejects.toThrow("crash before commit");
    expect([await effects("tx_2"), await record("tx_2")]).toEqual([[], []]);
    expect(await handler.consumeInTransaction(message("tx_2"), fn)).toMatchObject({ outcome: "processed" });
    expect(await effects("tx_2")).toEqual([{ amount: 1200 }]);
  });

  it("a permanent failure rolls the writes back and the message is dead: onDead once", async () => {
    const dead: string[] = [];
    const fn = async ({ tx }: { tx: pg.PoolClient }) => {
      await tx.query(`INSERT INTO ${table}_effects VALUES ('tx_3', 1)`);
      throw new Declined("invalid event");
    };
    const options = { isPermanentError, onDead: (m: InboxMessage) => void dead.push(m.messageId) };
    expect(await handler.consumeInTransaction(message("tx_3"), fn, options)).toMatchObject({ outcome: "dead" });
    expect(await handler.consumeInTransaction(message("tx_3"), fn, options)).toMatchObject({ outcome: "dead" });
    expect([dead, await effects("tx_3"), await record("tx_3")]).toEqual([["tx_3"], [], [{ status: "FAILED" }]]);
  });

  it("out of budget in a transaction is dead on the delivery that spends it", async () => {
    const dead: string[] = [];
    const fn = () => Promise.reject(new Error("deadlock detected"));
    const options = { onDead: (m: InboxMessage) => void dead.push(m.messageId) };
    await expect(handler.consumeInTransaction(message("tx_4"), fn, options)).rejects.toThrow("deadlock");
    expect(await handler.consumeInTransaction(message("tx_4"), fn, options)).toMatchObject({ outcome: "dead" });
    expect(dead).toEqual(["tx_4"]);
  });
});
