// Scenario 13: the crash matrix again, with the provider call in recovery points: SIGKILL anywhere repeats no external effect.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recover, execute, type Outcome } from "./support/handler-client";
import { DedupingDownstream, type CallCrash } from "./support/deduping-downstream";
import { FiguresCollector } from "./support/figures";
import { startWorker, stopAll, type WorkerProcess } from "./support/processes";
import { openScenarioDb, type ScenarioDb } from "./support/scenario-db";
import { missingServices } from "./support/services";
import { seededRandom } from "./support/soak-traffic";
import { ageRecords } from "./support/tables";

const WORKERS = 4;
const ROUNDS = 6;
/** Per worker and round: one key that carries a planned crash, and bystanders killed wherever they are. */
const BYSTANDERS = 2;
const RECOVERY_TIMEOUT_MS = 60_000;
const SEED = Number(process.env.RELIABILITY_STEPS_SEED ?? Date.now() % 2 ** 31);

type Plan = { kind: "provider"; path: "/charges" | "/receipts"; when: CallCrash } | { kind: "after-steps" };
const PLANS: Plan[] = [
  { kind: "provider", path: "/charges", when: "before-effect" },
  { kind: "provider", path: "/charges", when: "after-effect" },
  { kind: "provider", path: "/receipts", when: "before-effect" },
  { kind: "provider", path: "/receipts", when: "after-effect" },
  { kind: "after-steps" },
];

/** How many calls each step's key gets once the key completes, when the plan fired and nothing else hit the key. */
function expectedCalls(plan: Plan): { charges: number; receipts: number } {
  if (plan.kind === "after-steps" || plan.when === "before-effect") return { charges: 1, receipts: 1 };
  // Killed after the provider applied the call and before it answered: the retry repeats that one call, deduped.
  return plan.path === "/charges" ? { charges: 2, receipts: 1 } : { charges: 1, receipts: 2 };
}

describe.skipIf(missingServices())(
  "[DATABASE_URL] 13. crash matrix with recovery points (ctx.step) and a deduping provider",
  () => {
    const figures = new FiguresCollector(
      13,
      `SIGKILL at planned and random points, ${WORKERS} processes, two provider calls in ctx.step`,
    );
    const downstream = new DedupingDownstream();
    const workers = new Set<WorkerProcess>();
    const slots: WorkerProcess[] = [];
    const planned = new Map<string, Plan>();
    const keys: string[] = [];
    let generation = 0;
    let kills = 0;
    let db: ScenarioDb;

    const start = async (slot: number) => {
      const worker = await startWorker(
        "step-worker.ts",
        db.workerConfig(`w${slot}-${++generation}`, {
          handler: { heartbeatIntervalMs: 200 },
          downstreamUrl: `http://127.0.0.1:${downstream.port}`,
          logLevel: "warn",
        }),
      );
      workers.add(worker);
      slots[slot] = worker;
      return worker;
    };
    const live = () => slots.filter((worker) => worker.alive);
    const killedAfterSteps = (key: string) =>
      [...workers].some((worker) => worker.logged({ msg: "killed after steps", key }).length > 0);

    beforeAll(async () => {
      db = await openScenarioDb("steps");
      await downstream.start();
      await Promise.all(Array.from({ length: WORKERS }, (_, slot) => start(slot)));
    });
    afterAll(async () => {
      await stopAll(workers);
      await downstream.close();
      if (db) {
        const effects = [...downstream.effectsByCall().values()];
        figures.save({
          executions: effects.reduce((a, b) => a + b, 0),
          doubleExecutions: effects.filter((n) => n > 1).length,
          notes:
            `seed ${SEED}; ${kills} workers SIGKILLed over ${ROUNDS} rounds (a planned crash each, before or after the provider applied ` +
            `a call, or after both steps; the bystanders in flight died wherever they were); ${downstream.dedupedCalls()} calls in flight ` +
            `at a crash repeated with their step key and deduped by the provider; counted: provider effects, doubles per call`,
        });
        await db.close();
      }
    });

    it("applies each provider call once per request, through crashes at every point; completed steps are never called again", async () => {
      const random = seededRandom(SEED);
      const outcomes = new Map<string, Outcome>();
      for (let round = 0; round < ROUNDS; round++) {
        const sends: Array<Promise<void>> = [];
        for (let slot = 0; slot < WORKERS; slot++) {
          const worker = slots[slot] as WorkerProcess;
          for (let i = 0; i <= BYSTANDERS; i++) {
            const key = `r${round}-w${slot}-${i}`;
            keys.push(key);
            let killAfterSteps = false;
            if (i === 0) {
              const plan = PLANS[Math.floor(random() * PLANS.length)] as Plan;
              planned.set(key, plan);
              if (plan.kind === "provider") downstream.planCrash(plan.path, key, plan.when);
              killAfterSteps = plan.kind === "after-steps";
            }
            const payload = { amount: 1_000 + round, currency: "EUR" };
            sends.push(
              execute(worker, figures, { key, payload, killAfterSteps }).then(
                (outcome) => void outcomes.set(key, outcome),
              ),
            );
          }
        }
        await Promise.all(sends);
        downstream.clearCrashes();
        for (let slot = 0; slot < WORKERS; slot++) {
          if (slots[slot]?.alive) continue;
          kills++;
          await start(slot);
        }
      }
      expect(kills).toBeGreaterThan(0);

      // What crashed stays PROCESSING until its lease is older than the timeout (the store's clock), then recovery frees it.
      const unfinished = () => keys.filter((key) => outcomes.get(key)?.status !== 200);
      for (let pass = 0; pass < 3 && unfinished().length > 0; pass++) {
        await ageRecords(db.pool, db.table, 2 * RECOVERY_TIMEOUT_MS);
        await recover(live()[0] as WorkerProcess, RECOVERY_TIMEOUT_MS);
        await Promise.all(
          unfinished().map(async (key, i) => {
            const payload = { amount: 1_000 + Number(key.slice(1, key.indexOf("-"))), currency: "EUR" };
            outcomes.set(key, await execute(live()[i % WORKERS] as WorkerProcess, figures, { key, payload }));
          }),
        );
      }
      expect(unfinished()).toEqual([]);
      expect(live()).toHaveLength(WORKERS);

      // Every call of every request reached the provider's effect exactly once.
      expect(downstream.collisions).toEqual([]);
      const effects = downstream.effectsByCall();
      for (const key of keys) {
        expect(effects.get(`/charges ${key}`), key).toBe(1);
        expect(effects.get(`/receipts ${key}`), key).toBe(1);
      }

      // Where a planned crash hit a key (and nothing else did), a completed step was replayed, not called again.
      const calls = (path: string, key: string) =>
        [...downstream.ledger.values()].find((e) => e.path === path && e.requestKey === key)?.calls;
      let checked = 0;
      for (const [key, plan] of planned) {
        const fired = plan.kind === "after-steps" ? killedAfterSteps(key) : downstream.firedCrashes.has(key);
        if (!fired) continue;
        checked++;
        const expected = expectedCalls(plan);
        expect({ key, charges: calls("/charges", key), receipts: calls("/receipts", key) }).toEqual({
          key,
          ...expected,
        });
      }
      expect(checked).toBe(planned.size);

      // And each answer replays: the result the provider calls built, from any process.
      for (const key of keys) {
        const payload = { amount: 1_000 + Number(key.slice(1, key.indexOf("-"))), currency: "EUR" };
        const replay = await execute(live()[0] as WorkerProcess, figures, { key, payload });
        expect(replay, key).toMatchObject({ status: 200, replayed: true });
      }
    });
  },
);
