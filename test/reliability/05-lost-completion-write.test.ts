// Scenario 5: the operation succeeds but recording its result fails: bounded retries, then an explicit UNRECORDED outcome.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FiguresCollector, doubleExecutions, sum } from "./support/figures";
import { counters, execute, recover } from "./support/handler-client";
import { injectLostWrites } from "./support/lost-writes";
import { startWorker, type WorkerProcess } from "./support/processes";
import { openScenarioDb, type ScenarioDb } from "./support/scenario-db";
import { missingServices } from "./support/services";
import { ageRecords, executionsOf, recordOf } from "./support/tables";

const RECOVERY_TIMEOUT_MS = 60_000;
const COMPLETION_ATTEMPTS = 3;
const payload = { amount: 12_50, currency: "GBP" };

describe.skipIf(missingServices())("[DATABASE_URL] 5. lost completion write", () => {
  const figures = new FiguresCollector(5, "lost completion write");
  let db: ScenarioDb;
  let worker: WorkerProcess;
  let lostWrites: { remove(): Promise<void> };

  beforeAll(async () => {
    db = await openScenarioDb("lost");
    lostWrites = await injectLostWrites(db.pool, db.table);
    worker = await startWorker(
      "handler-worker.ts",
      db.workerConfig("worker", { handler: { completionAttempts: COMPLETION_ATTEMPTS } }),
    );
  });
  afterAll(async () => {
    await worker?.stop();
    if (db) {
      const executions = await db.executions();
      figures.save({
        executions: sum(executions),
        doubleExecutions: doubleExecutions(executions),
        notes: "an unrecorded success re-executes after recovery, by design (documented, logged UNRECORDED, counted)",
      });
      await lostWrites.remove();
      await db.close();
    }
  });

  it("retries a completion write that failed once, records it, and replays it", async () => {
    const key = "flaky-1";
    const first = await execute(worker, figures, { key, payload });
    expect(first).toMatchObject({ status: 200, replayed: false });
    expect(
      worker.logged({ key, level: "warn", msg: "idempotency: storing the response failed", attempt: 1 }),
    ).toHaveLength(1);
    expect(
      worker.logged({ key, status: "SUCCESS", msg: "idempotency: executed and stored the response" }),
    ).toHaveLength(1);
    expect(await recordOf(db.pool, db.table, key)).toMatchObject({
      status: "SUCCESS",
      response: JSON.stringify(first.response),
    });

    const replay = await execute(worker, figures, { key, payload });
    expect(replay).toMatchObject({ status: 200, replayed: true });
    expect(JSON.stringify(replay.response)).toBe(JSON.stringify(first.response));
    expect(await executionsOf(db.pool, db.effectsTable, key)).toBe(1);
  });

  it("gives up after the bounded attempts: returns the result, logs UNRECORDED at error level, counts it, and holds duplicates off until recovery", async () => {
    const key = "lost-1";
    const before = await counters(worker);
    const first = await execute(worker, figures, { key, payload });
    expect(first).toMatchObject({ status: 200, replayed: false, response: { key, worker: "worker" } });

    const attempts = worker.logged({ key, level: "warn", msg: "idempotency: storing the response failed" });
    expect(attempts.map((line) => line.attempt)).toEqual([1, 2, 3]);
    expect(worker.logged({ key, level: "error", status: "UNRECORDED" })).toHaveLength(1);
    const after = await counters(worker);
    expect((after.unrecorded ?? 0) - (before.unrecorded ?? 0)).toBe(1);
    expect((after.storeErrors ?? 0) - (before.storeErrors ?? 0)).toBe(COMPLETION_ATTEMPTS);

    // Nothing was stored, so the record still says "running": duplicates wait instead of re-executing.
    expect(await recordOf(db.pool, db.table, key)).toMatchObject({ status: "PROCESSING" });
    expect(await execute(worker, figures, { key, payload })).toMatchObject({
      status: 409,
      code: "REQUEST_IN_PROGRESS",
    });
    expect(await executionsOf(db.pool, db.effectsTable, key)).toBe(1);

    // Once the store takes writes again, recovery frees the key and the retry runs (the documented cost).
    await lostWrites.remove();
    await ageRecords(db.pool, db.table, 2 * RECOVERY_TIMEOUT_MS, key);
    expect(await recover(worker, RECOVERY_TIMEOUT_MS)).toEqual({ released: 1, poisoned: 0 });
    const retry = await execute(worker, figures, { key, payload });
    expect(retry).toMatchObject({ status: 200, replayed: false });
    expect(await executionsOf(db.pool, db.effectsTable, key)).toBe(2);
    const replay = await execute(worker, figures, { key, payload });
    expect(replay).toMatchObject({ status: 200, replayed: true, response: retry.response });
  });
});
