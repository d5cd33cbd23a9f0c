// 50 duplicates waiting on one key over a pg Pool of 5: waiting holds no connection, and the store sees a bounded number of polls.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { deferred, outcome } from "@/blocks/idempotency/testing/deferred";
import { PostgresStore } from "@/blocks/idempotency/stores/postgres-store";
import { dropTables, uniqueTableName } from "./support/services";
import { maxPollsWithin, watchedStore } from "./support/watched-store";

const WAITERS = 50;

describe.skipIf(!process.env.DATABASE_URL)("[DATABASE_URL] 50 waiting duplicates on one key, pg Pool of max 5", () => {
  let pool: pg.Pool;
  const table = uniqueTableName("idem_wait");

  beforeAll(async () => {
    // A connection timeout well under the wait: a waiter that held a connection would starve the first attempt into it.
    pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 5, connectionTimeoutMillis: 1_000 });
    await new PostgresStore(pool, { table }).createSchema();
  });
  afterAll(async () => {
    await dropTables(pool, table);
    await pool.end();
  });

  it("every waiter gets the replay, the first attempt completes through the pool, and polls stay within waiters x polls", async () => {
    const watched = watchedStore(new PostgresStore(pool, { table }));
    const handler = new IdempotencyHandler(watched.store, undefined, { waitMs: 20_000, storeTimeoutMs: 5_000 });
    const scope = { operation: "payments:create", userId: "u_1", key: "one-key", payload: { amount: 100 } };
    const entered = deferred();
    const finish = deferred();
    let runs = 0;
    const first = handler.execute(scope, async () => {
      runs++;
      entered.resolve();
      await finish.promise;
      // The operation's own database work, while 50 waiters poll the same pool.
      const { rows } = await pool.query<{ n: number }>("SELECT 1 AS n");
      return { id: "ch_1", n: rows[0]!.n };
    });
    await entered.promise;

    const started = performance.now();
    const waiters = Array.from({ length: WAITERS }, () => outcome(handler.execute(scope, () => ({ id: "never" }))));
    // Every waiter has polled at least once and the pool is busy with them, then the first attempt finishes.
    await watched.getsReached(WAITERS * 2);
    finish.resolve();
    expect(await first).toEqual({ response: { id: "ch_1", n: 1 }, replayed: false });
    const answers = await Promise.all(waiters);
    const elapsed = performance.now() - started;

    expect(runs).toBe(1);
    expect(
      answers.filter((answer) => !(answer.ok && answer.value.replayed && answer.value.response.id === "ch_1")),
    ).toEqual([]);
    expect(watched.gets).toBeLessThanOrEqual(WAITERS * maxPollsWithin(elapsed));
    expect(pool.totalCount).toBeLessThanOrEqual(5);
  });
});
