// The outbox on PGlite (embedded PostgreSQL): what a message written with a transaction becomes, through the relay.
import { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { addToOutbox } from "./add-to-outbox";
import { cleanupOutbox } from "./cleanup";
import { isOutboxError } from "./errors";
import { schemaStatements } from "./postgres-schema";
import { startOutboxRelay } from "./relay";
import type { OutboxMessage } from "./relay-options";

let db: PGlite;
let table: string;
let tables = 0;

beforeAll(() => {
  db = new PGlite();
});
afterAll(() => db.close());
beforeEach(async () => {
  table = `outbox_test_${++tables}`;
  for (const sql of schemaStatements(table)) await db.query(sql);
});

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("addToOutbox", () => {
  it("publishes a committed message under the id it returned, and never a rolled-back one", async () => {
    const published: OutboxMessage[] = [];
    const committed = await db.transaction((tx) =>
      addToOutbox(tx, { topic: "order.created", key: "ord_1", payload: { amount: 1200 } }, { table }),
    );
    await db
      .transaction(async (tx) => {
        await addToOutbox(tx, { topic: "order.created", key: "ord_2", payload: { amount: 99 } }, { table });
        throw new Error("card declined");
      })
      .catch(() => {});
    const relay = startOutboxRelay({
      db,
      table,
      publish: (message) => Promise.resolve(void published.push(message)),
      pollMs: 5,
    });
    await until(() => published.length === 1);
    await relay.stop();
    expect(published).toMatchObject([
      { id: committed, topic: "order.created", key: "ord_1", payload: { amount: 1200 }, attempt: 1 },
    ]);
  });

  it("keeps a delayed message back until its delay has passed", async () => {
    await addToOutbox(db, { topic: "reminder", payload: {}, delayMs: 60_000 }, { table });
    const published: OutboxMessage[] = [];
    const relay = startOutboxRelay({
      db,
      table,
      publish: (message) => Promise.resolve(void published.push(message)),
      pollMs: 5,
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await relay.stop();
    expect(published).toEqual([]);
  });

  it("refuses a message it could not publish, naming the problem", async () => {
    const refused = (message: unknown) => addToOutbox(db, message as never, { table }).catch((error: unknown) => error);
    const noTopic = await refused({ payload: {} });
    expect(isOutboxError(noTopic) && noTopic.message).toMatch(/"topic" must be a non-empty string/);
    expect(await refused({ topic: "t" })).toMatchObject({
      code: "OUTBOX_INVALID_MESSAGE",
      message: expect.stringMatching(/"payload" must be a JSON value/) as unknown,
    });
    expect(await refused({ topic: "t", payload: 1, headers: { tenant: 7 } })).toMatchObject({
      message: expect.stringMatching(/header "tenant" must be a string/) as unknown,
    });
    expect(await refused({ topic: "t", payload: 1, delayMs: -1 })).toMatchObject({
      message: expect.stringMatching(/"delayMs" must be a finite number >= 0/) as unknown,
    });
  });
});

describe("startOutboxRelay", () => {
  it("retries a failing publish with backoff, then calls onDead once when attempts run out", async () => {
    const id = await addToOutbox(db, { topic: "payment.settled", payload: { id: "pay_1" } }, { table });
    const attempts: number[] = [];
    const dead: Array<[OutboxMessage, unknown]> = [];
    const relay = startOutboxRelay({
      db,
      table,
      pollMs: 5,
      maxAttempts: 3,
      retryBaseMs: 20,
      publish: (message) => {
        attempts.push(message.attempt);
        return Promise.reject(new Error("broker unreachable"));
      },
      onDead: (message, error) => void dead.push([message, error]),
    });
    await until(() => dead.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await relay.stop();
    expect(attempts).toEqual([1, 2, 3]);
    expect(dead).toMatchObject([[{ id, attempt: 3 }, { message: "broker unreachable" }]]);
    const { rows } = await db.query<{ last_error: string; dead: boolean }>(
      `SELECT last_error, dead_at IS NOT NULL AS dead FROM ${table}`,
    );
    expect(rows).toEqual([{ last_error: "broker unreachable", dead: true }]);
  });

  it("sends a message that took down every relay publishing it to onDead unpublished, instead of claiming it forever", async () => {
    const id = await addToOutbox(db, { topic: "order.created", payload: { poison: true } }, { table });
    // Three relays claimed it and died before recording anything.
    await db.query(`UPDATE ${table} SET attempts = 3`);
    const publishes: string[] = [];
    const dead: string[] = [];
    const relay = startOutboxRelay({
      db,
      table,
      pollMs: 5,
      maxAttempts: 3,
      publish: (message) => Promise.resolve(void publishes.push(message.id)),
      onDead: (message) => void dead.push(message.id),
    });
    await until(() => dead.length === 1);
    await relay.stop();
    expect([publishes, dead]).toEqual([[], [id]]);
  });

  it("stop() finishes the batch in hand: the message is published and marked before it resolves", async () => {
    await addToOutbox(db, { topic: "order.created", payload: {} }, { table });
    let started!: () => void;
    const publishing = new Promise<void>((resolve) => (started = resolve));
    const relay = startOutboxRelay({
      db,
      table,
      pollMs: 5,
      publish: async () => {
        started();
        await new Promise((resolve) => setTimeout(resolve, 200));
      },
    });
    await publishing;
    await relay.stop();
    const { rows } = await db.query<{ published: boolean }>(
      `SELECT published_at IS NOT NULL AS published FROM ${table}`,
    );
    expect(rows).toEqual([{ published: true }]);
  });

  it("refuses a lease shorter than the publish timeout", () => {
    expect(() =>
      startOutboxRelay({ db, table, publish: () => Promise.resolve(), leaseMs: 1000, publishTimeoutMs: 5000 }),
    ).toThrow(/"publishTimeoutMs" \(5000\) must be less than "leaseMs" \(1000\)/);
  });
});

describe("cleanupOutbox", () => {
  it("deletes published rows past the retention, at most `limit` at a time, and nothing else", async () => {
    for (let i = 0; i < 5; i++) await addToOutbox(db, { topic: "t", payload: i }, { table });
    await addToOutbox(db, { topic: "pending", payload: 0 }, { table });
    await db.query(`UPDATE ${table} SET published_at = now() - interval '2 days' WHERE topic = 't'`);
    const options = { table, retentionMs: 86_400_000, limit: 2 };
    expect([
      await cleanupOutbox(db, options),
      await cleanupOutbox(db, options),
      await cleanupOutbox(db, options),
      await cleanupOutbox(db, options),
    ]).toEqual([2, 2, 1, 0]);
    const { rows } = await db.query<{ topic: string }>(`SELECT topic FROM ${table}`);
    expect(rows).toEqual([{ topic: "pending" }]);
  });
});

describe("startOutboxRelay with a signal", () => {
  it("stops when the signal aborts, after publishing what it had", async () => {
    const id = await addToOutbox(db, { topic: "order.created", payload: {} }, { table });
    const controller = new AbortController();
    const published: string[] = [];
    startOutboxRelay({
      db,
      table,
      pollMs: 5,
      signal: controller.signal,
      publish: (message) => Promise.resolve(void published.push(message.id)),
    });
    await until(() => published.length === 1);
    controller.abort();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await addToOutbox(db, { topic: "order.created", payload: {} }, { table });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(published).toEqual([id]);
  });
});
