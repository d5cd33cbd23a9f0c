// Scenario 2: a worker process SIGKILLed mid-execution; recovery frees the key, retries run once more, three crashes poison.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FiguresCollector, doubleExecutions, sum } from "./support/figures";
import { execute, recover } from "./support/handler-client";
import { startWorker, stopAll, type WorkerProcess } from "./support/processes";
import { openScenarioDb, type ScenarioDb } from "./support/scenario-db";
import { missingServices } from "./support/services";
import { ageRecords, executionsOf, recordOf, retryCountOf } from "./support/tables";

const RECOVERY_TIMEOUT_MS = 60_000;
const payload = { amount: 4200, currency: "EUR" };

describe.skipIf(missingServices())("[DATABASE_URL] 2. crash mid-execution (SIGKILL)", () => {
  const figures = new FiguresCollector(2, "crash mid-execution (SIGKILL)");
  const workers = new Set<WorkerProcess>();
  let db: ScenarioDb;
  let survivor: WorkerProcess;
  let jobs: WorkerProcess;

  const start = async (id: string) => {
    const worker = await startWorker(
      "handler-worker.ts",
      db.workerConfig(id, { handler: { heartbeatIntervalMs: 200 } }),
    );
    workers.add(worker);
    return worker;
  };

  /** Starts a fresh worker, lets it run the operation past its side effect, and kills it there. */
  const crashWhileExecuting = async (key: string, victimId: string) => {
    const victim = await start(victimId);
    const request = execute(victim, figures, { key, payload, hold: "after-effect" });
    await victim.waitForEvent("executed", key);
    victim.signal("SIGKILL");
    expect(await victim.exited).toMatchObject({ signal: "SIGKILL" });
    expect(await request).toMatchObject({ status: 0, code: "WORKER_EXITED" });
  };

  /**
   * The stalled record is left alone until its lease is older than the timeout, then recovered by
   * the maintenance job, which runs in two processes at once: the crash is freed and counted once.
   */
  const recoverAfterTimeout = async (key: string) => {
    expect(await recover(survivor, RECOVERY_TIMEOUT_MS)).toEqual({ released: 0, poisoned: 0 });
    await ageRecords(db.pool, db.table, 2 * RECOVERY_TIMEOUT_MS, key);
    const runs = await Promise.all([recover(survivor, RECOVERY_TIMEOUT_MS), recover(jobs, RECOVERY_TIMEOUT_MS)]);
    return { released: runs[0].released + runs[1].released, poisoned: runs[0].poisoned + runs[1].poisoned };
  };

  beforeAll(async () => {
    db = await openScenarioDb("crash");
    [survivor, jobs] = await Promise.all([start("survivor"), start("jobs")]);
  });
  afterAll(async () => {
    await stopAll(workers);
    if (db) {
      figures.save({
        executions: sum(await db.executions()),
        doubleExecutions: doubleExecutions(await db.executions()),
        notes: "killed after the side effect, so each retry re-executes by design; 3 crashes poison",
      });
      await db.close();
    }
  });

  it("frees a crashed worker's key after the timeout; the retry executes exactly once more and its result replays", async () => {
    const key = "crash-then-succeed";
    await crashWhileExecuting(key, "victim-a");
    expect(await recordOf(db.pool, db.table, key)).toMatchObject({ status: "PROCESSING" });
    expect(await execute(survivor, figures, { key, payload })).toMatchObject({
      status: 409,
      code: "REQUEST_IN_PROGRESS",
    });

    expect(await recoverAfterTimeout(key)).toEqual({ released: 1, poisoned: 0 });
    expect(await retryCountOf(db.pool, db.table, key)).toBe(1);

    const retry = await execute(survivor, figures, { key, payload });
    expect(retry).toMatchObject({ status: 200, replayed: false, response: { key, worker: "survivor" } });
    expect(await executionsOf(db.pool, db.effectsTable, key)).toBe(2);

    const replay = await execute(survivor, figures, { key, payload });
    expect(replay).toMatchObject({ status: 200, replayed: true });
    expect(JSON.stringify(replay.response)).toBe(JSON.stringify(retry.response));
    expect(await executionsOf(db.pool, db.effectsTable, key)).toBe(2);
  });

  it("counts every crash against the retry budget and poisons the key at the third", async () => {
    const key = "crash-three-times";
    for (let crash = 1; crash <= 3; crash++) {
      await crashWhileExecuting(key, `victim-${crash}`);
      expect(await executionsOf(db.pool, db.effectsTable, key)).toBe(crash);
      expect(await execute(survivor, figures, { key, payload })).toMatchObject({
        status: 409,
        code: "REQUEST_IN_PROGRESS",
      });
      expect(await recoverAfterTimeout(key)).toEqual(
        crash < 3 ? { released: 1, poisoned: 0 } : { released: 0, poisoned: 1 },
      );
      expect(await retryCountOf(db.pool, db.table, key)).toBe(crash);
    }
    expect(await recordOf(db.pool, db.table, key)).toMatchObject({ status: "FAILED" });
    expect(await execute(survivor, figures, { key, payload })).toMatchObject({ status: 409, code: "REQUEST_FAILED" });
    expect(await executionsOf(db.pool, db.effectsTable, key)).toBe(3);
  });
});
