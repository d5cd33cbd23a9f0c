// Scenario 3: a worker frozen (SIGSTOP) past its lease; recovery and a second worker complete the key; the late completion is fenced off.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FiguresCollector, doubleExecutions, sum } from "./support/figures";
import { counters, execute, recover } from "./support/handler-client";
import { startWorker, stopAll, type WorkerProcess } from "./support/processes";
import { openScenarioDb, type ScenarioDb } from "./support/scenario-db";
import { missingServices } from "./support/services";
import { ageRecords, executionsOf, recordOf, retryCountOf } from "./support/tables";

const RECOVERY_TIMEOUT_MS = 60_000;
const payload = { amount: 990, currency: "USD" };

describe.skipIf(missingServices())("[DATABASE_URL] 3. stale worker (paused past its lease)", () => {
  const figures = new FiguresCollector(3, "stale worker paused past its lease");
  const workers = new Set<WorkerProcess>();
  let db: ScenarioDb;
  let second: WorkerProcess;

  const start = async (id: string) => {
    const worker = await startWorker(
      "handler-worker.ts",
      db.workerConfig(id, { handler: { heartbeatIntervalMs: 200 } }),
    );
    workers.add(worker);
    return worker;
  };

  /**
   * Freezes `stale` mid-operation (SIGSTOP stops its heartbeat with everything else, like a long GC
   * pause or a suspended VM), lets its lease expire on the store clock, and has the second worker
   * recover the key and complete it.
   */
  const takeOver = async (stale: WorkerProcess, key: string, frozenAt: "started" | "executed") => {
    await stale.waitForEvent(frozenAt, key);
    stale.signal("SIGSTOP");
    await ageRecords(db.pool, db.table, 2 * RECOVERY_TIMEOUT_MS, key);
    expect(await recover(second, RECOVERY_TIMEOUT_MS)).toEqual({ released: 1, poisoned: 0 });
    const completed = await execute(second, figures, { key, payload });
    expect(completed).toMatchObject({ status: 200, replayed: false, response: { key, worker: "second" } });
    return completed;
  };

  /** Wakes the stale worker and waits until its heartbeat noticed the record is no longer its own. */
  const wake = async (stale: WorkerProcess, key: string) => {
    stale.signal("SIGCONT");
    await expect
      .poll(() => stale.logged({ key, status: "LEASE_LOST", msg: "idempotency: lease lost during execution" }).length)
      .toBe(1);
    await stale.request({ type: "release", key });
  };

  beforeAll(async () => {
    db = await openScenarioDb("stale");
    second = await start("second");
  });
  afterAll(async () => {
    await stopAll(workers);
    if (db) {
      const executions = await db.executions();
      figures.save({
        executions: sum(executions),
        doubleExecutions: doubleExecutions(executions),
        notes:
          "the worker frozen after its side effect ran by design; frozen before it, it never ran; late completions fenced off",
      });
      await db.close();
    }
  });

  it("rejects the late completion of a worker frozen after its side effect: the stored response stays the second worker's", async () => {
    const key = "stale-after-effect";
    const stale = await start("stale-a");
    const staleRequest = execute(stale, figures, { key, payload, hold: "after-effect" });
    const completed = await takeOver(stale, key, "executed");

    await wake(stale, key);
    const late = await staleRequest;
    // The frozen worker's own caller still learns what its execution did; nothing of it is stored.
    expect(late).toMatchObject({ status: 200, replayed: false, response: { key, worker: "stale-a" } });
    expect(
      stale.logged({ key, level: "error", status: "LEASE_LOST", msg: "idempotency: lease lost, response not stored" }),
    ).toHaveLength(1);
    expect((await counters(stale)).leaseLost).toBeGreaterThanOrEqual(1);

    const record = await recordOf(db.pool, db.table, key);
    expect(record).toMatchObject({ status: "SUCCESS", response: JSON.stringify(completed.response) });
    for (const worker of [stale, second]) {
      const replay = await execute(worker, figures, { key, payload });
      expect(replay).toMatchObject({ status: 200, replayed: true });
      expect(JSON.stringify(replay.response)).toBe(JSON.stringify(completed.response));
    }
    expect(await executionsOf(db.pool, db.effectsTable, key)).toBe(2);
    expect(await retryCountOf(db.pool, db.table, key)).toBe(1);
  });

  it("keeps a live execution's key past its TTL: the heartbeat renews the lease, so a duplicate waits and never runs", async () => {
    const key = "outlives-ttl";
    const ttlMs = 60_000;
    const live = await startWorker(
      "handler-worker.ts",
      db.workerConfig("long-runner", { handler: { heartbeatIntervalMs: 100, ttlMs } }),
    );
    workers.add(live);
    const request = execute(live, figures, { key, payload, hold: "after-effect" });
    await live.waitForEvent("executed", key);
    // The execution has now run for longer than the TTL (on the store clock); it is alive and beating.
    await ageRecords(db.pool, db.table, 2 * ttlMs, key, { expiry: true });
    const aged = await recordOf(db.pool, db.table, key);
    await expect
      .poll(async () => (await recordOf(db.pool, db.table, key))?.updated_at.getTime())
      .toBeGreaterThan(aged!.updated_at.getTime());

    expect(await execute(second, figures, { key, payload })).toMatchObject({
      status: 409,
      code: "REQUEST_IN_PROGRESS",
    });
    await live.request({ type: "release", key });
    expect(await request).toMatchObject({ status: 200, replayed: false, response: { key, worker: "long-runner" } });
    expect(await executionsOf(db.pool, db.effectsTable, key)).toBe(1);
    expect(await recordOf(db.pool, db.table, key)).toMatchObject({ status: "SUCCESS", expired: false });
  });

  it("aborts a worker frozen before its side effect: it never executes, and its late failure costs no retry budget", async () => {
    const key = "stale-before-effect";
    const stale = await start("stale-b");
    const staleRequest = execute(stale, figures, { key, payload, hold: "before-effect" });
    const completed = await takeOver(stale, key, "started");

    await wake(stale, key);
    expect(await staleRequest).toMatchObject({
      code: 'The idempotency record for key "stale-before-effect" was taken over while its operation ran.',
    });
    expect(await executionsOf(db.pool, db.effectsTable, key)).toBe(1);
    expect(await recordOf(db.pool, db.table, key)).toMatchObject({
      status: "SUCCESS",
      response: JSON.stringify(completed.response),
    });
    // Recovery counted the stall once; the stale worker's own failure must not count it again.
    expect(await retryCountOf(db.pool, db.table, key)).toBe(1);
  });
});
