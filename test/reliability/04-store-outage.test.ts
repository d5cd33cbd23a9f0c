// Scenario 4: the link to PostgreSQL is cut mid-load and restored, or slowed: 503s are fast, nothing hangs, records survive.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBounded, sleep } from "./support/bounded";
import { FiguresCollector, doubleExecutions, sum } from "./support/figures";
import { closeClient, errorCode, send, type HttpAnswer } from "./support/http-client";
import { startWorker, type WorkerProcess } from "./support/processes";
import { isReplay, outcomeOf } from "./support/replays";
import { openScenarioDb, type ScenarioDb } from "./support/scenario-db";
import { addressOf, missingServices, requireDatabaseUrl, viaAddress } from "./support/services";
import { counter, statsOf } from "./support/stats";
import { executionsOf, processingKeys, recordOf } from "./support/tables";
import { TcpProxy } from "./support/tcp-proxy";

const STORE_TIMEOUT_MS = 1_000;
/** Generous on a shared 2-core machine: the point is that nothing waits for the TCP stack to give up. */
const BOUND_MS = STORE_TIMEOUT_MS + 2_000;
const CUT_MS = 4_000;
const body = { amount: 700, currency: "EUR" };

type Sent = { key: string; startedAt: number; finishedAt: number; answer: HttpAnswer };

describe.skipIf(missingServices())("[DATABASE_URL] 4. store outage (PostgreSQL link cut mid-load)", () => {
  const figures = new FiguresCollector(
    4,
    "PostgreSQL link cut mid-load (blackhole, then reset) and restored; slowed past storeTimeoutMs",
  );
  let db: ScenarioDb;
  let proxy: TcpProxy;
  let worker: WorkerProcess;
  const stuck = { unrecorded: 0, neverRan: 0, released: 0 };

  const post = async (key: string, log?: Sent[]) => {
    const startedAt = performance.now();
    const answer = await send({ port: worker.port, key, body });
    figures.record(answer.status, answer.ms, isReplay(answer));
    log?.push({ key, startedAt, finishedAt: performance.now(), answer });
    return answer;
  };

  beforeAll(async () => {
    db = await openScenarioDb("outage");
    const url = requireDatabaseUrl();
    proxy = await TcpProxy.start(addressOf(url, 5432));
    worker = await startWorker(
      "http-worker.ts",
      db.workerConfig("app", {
        storeUrl: viaAddress(url, proxy.port),
        handler: { storeTimeoutMs: STORE_TIMEOUT_MS },
        pool: { max: 5, connectionTimeoutMillis: STORE_TIMEOUT_MS },
        logLevel: "warn",
      }),
    );
  });
  afterAll(async () => {
    await worker?.stop();
    await proxy?.close();
    closeClient();
    if (db) {
      const executions = await db.executions();
      figures.save({
        executions: sum(executions),
        doubleExecutions: doubleExecutions(executions),
        notes:
          `two cuts of ${CUT_MS / 1000} s, storeTimeoutMs ${STORE_TIMEOUT_MS}; ${stuck.released} creates whose answer was lost were freed ` +
          `after the restore; left PROCESSING for recovery: ${stuck.unrecorded} ran but could not record (201 sent, counted unrecorded), ` +
          `${stuck.neverRan} never ran (503 sent)`,
      });
      await db.close();
    }
  });

  it.each(["blackhole", "reset"] as const)(
    "%s: answers 503 STORE_UNAVAILABLE within a bounded time during the cut, stays up, and afterwards serves new keys and replays old ones byte for byte",
    async (mode) => {
      const stored = new Map<string, string>();
      for (let i = 0; i < 30; i++) {
        const answer = await post(`${mode}-before-${i}`);
        expect(answer.status).toBe(201);
        stored.set(`${mode}-before-${i}`, answer.text);
      }

      const sent: Sent[] = [];
      let loading = true;
      const load = runBounded(20_000, 8, 30_000, async (i) => {
        if (loading) await post(`${mode}-load-${i}`, sent);
      });
      await sleep(1_000);
      proxy.cut(mode);
      const cutAt = performance.now();
      // Sent by the test itself, so the cut always has a sample: every lane of the load may spend it
      // retrying a completion. Old keys (a replay needs the store too) and new ones.
      const retriesDuringCut = await Promise.all([
        ...[...stored.keys()].slice(0, 10).map((key) => post(key)),
        ...Array.from({ length: 5 }, (_, i) => post(`${mode}-during-cut-${i}`)),
      ]);
      await sleep(Math.max(0, CUT_MS - (performance.now() - cutAt)));
      proxy.restore();
      const restoredAt = performance.now();
      let probe = 0;
      await expect
        .poll(async () => (await post(`${mode}-probe-${probe++}`)).status, { timeout: 20_000, interval: 250 })
        .toBe(201);
      const healthyAt = performance.now();
      await sleep(1_000);
      loading = false;
      await load;

      // Nothing hung, nothing crashed, no 5xx but 503 STORE_UNAVAILABLE.
      expect(sent.filter((s) => s.answer.status <= 0)).toEqual([]);
      for (const { key, answer } of sent) {
        expect([201, 503], key).toContain(answer.status);
        if (answer.status === 503) expect(errorCode(answer), key).toBe("STORE_UNAVAILABLE");
      }
      expect(worker.alive).toBe(true);
      expect(worker.logged({ status: "ROUTE_ERROR" })).toEqual([]);
      expect(worker.stderr).not.toMatch(/unhandled|uncaught/i);

      // Every request sent during the cut was refused quickly with 503 STORE_UNAVAILABLE.
      // (Lanes caught mid-write may spend the whole cut retrying the completion, so the load's own sample
      // can be empty; the test's sends during the cut are the sure one.)
      const duringCut = sent.filter((s) => s.startedAt >= cutAt && s.finishedAt <= restoredAt);
      for (const { key, answer } of [...duringCut, ...retriesDuringCut.map((answer) => ({ key: "retry", answer }))]) {
        expect(answer.status, key).toBe(503);
        expect(errorCode(answer), key).toBe("STORE_UNAVAILABLE");
        expect(answer.ms, key).toBeLessThanOrEqual(BOUND_MS);
      }
      for (const { key, startedAt, answer } of sent)
        if (startedAt >= cutAt && startedAt < restoredAt) expect(answer.ms, key).toBeLessThanOrEqual(BOUND_MS);

      // After the restore: new keys execute once, and records written before the cut replay identically.
      const afterRestore = sent.filter((s) => s.startedAt >= healthyAt);
      expect(afterRestore.length).toBeGreaterThan(0);
      expect(afterRestore.every((s) => s.answer.status === 201)).toBe(true);
      for (const [key, text] of stored) {
        const replay = await post(key);
        expect(replay.status, key).toBe(201);
        expect(isReplay(replay), key).toBe(true);
        expect(replay.text, key).toBe(text);
      }

      const executions = await db.executions();
      expect(doubleExecutions(executions)).toBe(0);
      for (const key of stored.keys()) expect(executions.get(key), key).toBe(1);
      for (const { key, answer } of sent) if (answer.status === 201) expect(executions.get(key), key).toBe(1);
      expect(counter(await statsOf(worker), "storeErrors")).toBeGreaterThan(0);

      // Creates whose insert committed but whose answer died with the link are freed once the store is
      // back (6 tries over ~15 s). What stays PROCESSING is left to recovery: reported, not asserted.
      const neverRan = async () => (await processingKeys(db.pool, db.table)).filter((key) => !executions.has(key));
      const deadline = performance.now() + 20_000;
      while ((await neverRan()).length > 0 && performance.now() < deadline) await sleep(500);
      stuck.released = worker.logged({ msg: "idempotency: released a record whose create went unanswered" }).length;
      for (const key of await processingKeys(db.pool, db.table)) {
        if (executions.has(key)) stuck.unrecorded++;
        else stuck.neverRan++;
      }
    },
  );
  it("slow store: a create that answers after storeTimeoutMs hands its key back, so the client's retry runs at once", async () => {
    const key = "slow-create";
    expect((await post("slow-warm-up")).status).toBe(201);
    proxy.latencyMs = STORE_TIMEOUT_MS + 500;
    const first = await post(key);
    proxy.latencyMs = 0;
    expect([first.status, errorCode(first)]).toEqual([503, "STORE_UNAVAILABLE"]);
    expect(first.ms).toBeLessThanOrEqual(BOUND_MS);

    // The insert landed after the handler gave up; the record it created must not block the key.
    await expect.poll(() => recordOf(db.pool, db.table, key), { timeout: 5_000 }).toBeUndefined();
    const retry = await post(key);
    expect([retry.status, outcomeOf(retry)]).toEqual([201, "executed"]);
    expect(await executionsOf(db.pool, db.effectsTable, key)).toBe(1);
  });
});
