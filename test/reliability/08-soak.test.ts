// Scenario 8: a soak of mixed traffic with 20 % injected transient failures and the maintenance jobs running.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sleep } from "./support/bounded";
import { FiguresCollector, doubleExecutions, sum } from "./support/figures";
import { closeClient, errorCode, send } from "./support/http-client";
import { startWorker, type WorkerProcess } from "./support/processes";
import { isReplay } from "./support/replays";
import { openScenarioDb, type ScenarioDb } from "./support/scenario-db";
import { missingServices } from "./support/services";
import { LONG_HOLD_MS, SoakTraffic, seededRandom } from "./support/soak-traffic";
import { counter, statsOf } from "./support/stats";
import { recordsByStatus } from "./support/tables";

const SOAK_MS = Number(process.env.RELIABILITY_SOAK_SECONDS ?? 60) * 1_000;
const SEED = Number(process.env.RELIABILITY_SOAK_SEED ?? Date.now() % 2 ** 31);
const LANES = 12;
/** At most three requests per lane are in flight, and each holds at most one record. */
const MAX_IN_FLIGHT = 3 * LANES;
const TTL_MS = 30_000;
/** Long executions (LONG_HOLD_MS) outlive this; only their heartbeat keeps recovery off them. */
const RECOVER_AFTER_MS = 3_000;
const MB = 1024 * 1024;

describe.skipIf(missingServices())("[DATABASE_URL] 8. soak", () => {
  const figures = new FiguresCollector(8, `soak: mixed traffic, 20 % injected failures, jobs running`);
  let db: ScenarioDb;
  let worker: WorkerProcess;
  let notes = "";

  beforeAll(async () => {
    db = await openScenarioDb("soak");
    worker = await startWorker(
      "http-worker.ts",
      db.workerConfig("app", {
        failureRate: 0.2,
        handler: { heartbeatIntervalMs: 500, ttlMs: TTL_MS },
        jobs: { everyMs: 1_000, recoverAfterMs: RECOVER_AFTER_MS },
        logLevel: "error",
      }),
      { exposeGc: true },
    );
  });
  afterAll(async () => {
    await worker?.stop();
    closeClient();
    if (db) {
      const executions = await db.executions();
      figures.save({ executions: sum(executions), doubleExecutions: doubleExecutions(executions), notes });
      await db.close();
    }
  });

  it(
    `holds for ${SOAK_MS / 1000} s (seed ${SEED}): no double execution, no 5xx but injected ones, no PROCESSING growth, stable heap`,
    { timeout: SOAK_MS + 60_000 },
    async () => {
      const traffic = new SoakTraffic(seededRandom(SEED));
      const unexpected: string[] = [];
      let injected = 0;
      const deadline = performance.now() + SOAK_MS;
      const lane = async () => {
        // Bounded by time, and by count as a backstop against a runaway loop.
        for (let batch = 0; batch < 1_000_000 && performance.now() < deadline; batch++) {
          await Promise.all(
            traffic.next().map(async ({ key, path, body }) => {
              const answer = await send({ port: worker.port, path, key, body });
              figures.record(answer.status, answer.ms, isReplay(answer));
              traffic.record(key, answer);
              if (
                answer.status === 503 &&
                errorCode(answer) === "INJECTED_FAILURE" &&
                answer.headers["x-injected-failure"] === "1"
              )
                injected++;
              else if (answer.status >= 500 || answer.status <= 0)
                unexpected.push(`${key}: ${answer.status} ${answer.text}`);
            }),
          );
        }
      };

      const processing: number[] = [];
      let warmHeap = 0;
      const sampler = (async () => {
        for (let tick = 0; performance.now() < deadline; tick++) {
          await sleep(2_000);
          processing.push((await recordsByStatus(db.pool, db.table)).PROCESSING ?? 0);
          if (!warmHeap && performance.now() > deadline - SOAK_MS * 0.8)
            warmHeap = (await statsOf(worker, true)).heapUsed;
        }
      })();
      await Promise.all([...Array.from({ length: LANES }, lane), sampler]);

      // Every request is answered; the only 5xx are the injected failures.
      expect(unexpected).toEqual([]);
      expect(injected).toBeGreaterThan(0);

      // Zero double executions, and every key that answered 2xx ran exactly once with one set of bytes.
      const executions = await db.executions();
      expect(doubleExecutions(executions)).toBe(0);
      for (const [key, answers] of traffic.answers) {
        const ok = answers.filter((answer) => answer.status === 201);
        if (ok.length === 0) continue;
        expect(executions.get(key), key).toBe(1);
        expect(new Set(ok.map((answer) => answer.text)).size, key).toBe(1);
      }

      // PROCESSING records only ever belong to requests in flight, and none is left once traffic stops.
      expect(Math.max(...processing)).toBeLessThanOrEqual(MAX_IN_FLIGHT);
      await expect
        .poll(async () => (await recordsByStatus(db.pool, db.table)).PROCESSING ?? 0, { timeout: 10_000 })
        .toBe(0);

      // The jobs ran: nothing live was mistaken for a crash, and expired records were cleaned.
      const end = await statsOf(worker, true);
      expect(counter(end, "recovered")).toBe(0);
      if (SOAK_MS > TTL_MS + 5_000) expect(counter(end, "cleaned")).toBeGreaterThan(0);

      // Heap stable: live objects after a full GC grew by less than the larger of 32 MB and half.
      expect(warmHeap).toBeGreaterThan(0);
      expect(end.heapUsed).toBeLessThanOrEqual(Math.max(warmHeap + 32 * MB, warmHeap * 1.5));
      expect(worker.alive).toBe(true);
      notes =
        `${SOAK_MS / 1000} s, seed ${SEED}, ${LANES} client lanes, half wrapper and half capture style; ${injected} injected 503s; ` +
        `${traffic.longHolds} executions held ${LONG_HOLD_MS / 1000} s past a ${RECOVER_AFTER_MS / 1000} s recovery timeout, none recovered; max PROCESSING ${Math.max(...processing)}; ` +
        `heap after GC ${(warmHeap / MB).toFixed(1)} -> ${(end.heapUsed / MB).toFixed(1)} MB; cleaned ${counter(end, "cleaned")}`;
    },
  );
});
