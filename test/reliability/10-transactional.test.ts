// Scenario 9: transactional routes (record + order row in one commit) under the cross-process race and a PostgreSQL link cut.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBounded, sleep } from "./support/bounded";
import { FiguresCollector, doubleExecutions, sum } from "./support/figures";
import { closeClient, errorCode, send, type HttpAnswer } from "./support/http-client";
import { startWorker, stopAll, type WorkerProcess } from "./support/processes";
import { isReplay } from "./support/replays";
import { openScenarioDb, type ScenarioDb } from "./support/scenario-db";
import { addressOf, missingServices, requireDatabaseUrl, viaAddress } from "./support/services";
import { processingKeys, recordsByStatus } from "./support/tables";
import { TcpProxy } from "./support/tcp-proxy";

const PROCESSES = 3;
const KEYS = 60;
const SENDS_PER_KEY = 20;
const KEYS_PER_WAVE = 10;
const STORE_TIMEOUT_MS = 1_000;
/** The create may also wait for a connection and for a duplicate's lock (lockTimeoutMs, 2 s by default). */
const BOUND_MS = STORE_TIMEOUT_MS + 2_000 + 2_000;
const CUT_MS = 3_000;

/** Keys whose order row exists, and keys whose record is SUCCESS: in transactional mode the two sets are equal. */
async function committedKeys(db: ScenarioDb) {
  const { rows: records } = await db.pool.query<{ key: string }>(
    `SELECT key FROM ${db.table} WHERE status = 'SUCCESS'`,
  );
  const executions = await db.executions();
  return { records: new Set(records.map((row) => row.key)), orders: new Set(executions.keys()), executions };
}

describe.skipIf(missingServices())("[DATABASE_URL] 9. transactional routes (record and writes in one commit)", () => {
  const figures = new FiguresCollector(
    10,
    `transaction: true routes: ${PROCESSES} processes x ${KEYS} keys x ${SENDS_PER_KEY} concurrent sends, then the PostgreSQL link cut (blackhole, reset) mid-load`,
  );
  const workers: WorkerProcess[] = [];
  let db: ScenarioDb;
  let proxy: TcpProxy | undefined;
  const notes: string[] = [];

  beforeAll(async () => {
    db = await openScenarioDb("txn");
  });
  afterAll(async () => {
    await stopAll(workers);
    await proxy?.close();
    closeClient();
    if (db) {
      const executions = await db.executions();
      figures.save({
        executions: sum(executions),
        doubleExecutions: doubleExecutions(executions),
        notes: notes.join("; "),
      });
      await db.close();
    }
  });

  it("cross-process race: each key's order is written exactly once; every answer is its one stored response or 409 in progress", async () => {
    const racers = await Promise.all(
      Array.from({ length: PROCESSES }, (_, i) =>
        startWorker("transactional-worker.ts", db.workerConfig(`t${i}`, { pool: { max: 5 } })),
      ),
    );
    workers.push(...racers);
    const answers = new Map<string, HttpAnswer[]>();
    for (let wave = 0; wave < KEYS / KEYS_PER_WAVE; wave++) {
      const keys = Array.from({ length: KEYS_PER_WAVE }, (_, k) => `race-${wave * KEYS_PER_WAVE + k}`);
      for (const key of keys) answers.set(key, []);
      await Promise.all(
        keys.flatMap((key) =>
          Array.from({ length: SENDS_PER_KEY }, async (_, i) => {
            const answer = await send({
              port: racers[i % PROCESSES]!.port,
              path: "/orders",
              key,
              body: { amount: 100, holdMs: 20 },
            });
            figures.record(answer.status, answer.ms, isReplay(answer));
            answers.get(key)!.push(answer);
          }),
        ),
      );
    }

    const executions = await db.executions();
    expect(executions.size).toBe(KEYS);
    expect(doubleExecutions(executions)).toBe(0);
    for (const [key, sent] of answers) {
      for (const answer of sent) expect([201, 409], `${key}: ${answer.status} ${answer.text}`).toContain(answer.status);
      const stored = sent.filter((answer) => answer.status === 201);
      expect(stored.length, key).toBeGreaterThanOrEqual(1);
      expect(new Set(stored.map((answer) => answer.text)).size, `${key}: every 201 carries the same bytes`).toBe(1);
      for (const conflict of sent.filter((answer) => answer.status === 409))
        expect(errorCode(conflict)).toBe("REQUEST_IN_PROGRESS");
    }
    expect(await recordsByStatus(db.pool, db.table)).toEqual({ SUCCESS: KEYS });
    const conflicts = [...answers.values()].flat().filter((answer) => answer.status === 409).length;
    notes.push(
      `race: ${conflicts} of ${KEYS * SENDS_PER_KEY} sends got 409 (duplicates wait up to lockTimeoutMs for the first commit, then replay)`,
    );
    expect(racers.every((worker) => worker.alive)).toBe(true);
    await stopAll(racers);
  });

  it.each(["blackhole", "reset"] as const)(
    "%s cut mid-load: answers are 201, a fast 503, or the route's own connection error; afterwards no record is PROCESSING, every order has its SUCCESS record and vice versa, and retries run each key once",
    async (mode) => {
      const url = requireDatabaseUrl();
      proxy ??= await TcpProxy.start(addressOf(url, 5432));
      const worker = await startWorker(
        "transactional-worker.ts",
        db.workerConfig(`cut-${mode}`, {
          storeUrl: viaAddress(url, proxy.port),
          handler: { storeTimeoutMs: STORE_TIMEOUT_MS },
          pool: { max: 5, connectionTimeoutMillis: STORE_TIMEOUT_MS },
        }),
      );
      workers.push(worker);
      const sent: Array<{ key: string; answer: HttpAnswer }> = [];
      const post = async (key: string) => {
        const answer = await send({ port: worker.port, path: "/orders", key, body: { amount: 700 } });
        figures.record(answer.status, answer.ms, isReplay(answer));
        return answer;
      };
      let loading = true;
      const load = runBounded(20_000, 8, 30_000, async (i) => {
        if (!loading) return;
        const key = `${mode}-${i}`;
        sent.push({ key, answer: await post(key) });
      });
      await sleep(1_000);
      proxy.cut(mode);
      await sleep(CUT_MS);
      proxy.restore();
      let probe = 0;
      await expect
        .poll(async () => (await post(`${mode}-probe-${probe++}`)).status, { timeout: 20_000, interval: 250 })
        .toBe(201)
        .catch((err: unknown) => {
          throw new Error(`no 201 after the restore (worker ${worker.alive ? "alive" : "exited"}):\n${worker.stderr}`, {
            cause: err,
          });
        });
      await sleep(500);
      loading = false;
      await load;

      expect(worker.alive).toBe(true);
      // A route whose own INSERT was cut gets its own error back, as `execute` gives it (the app's 500);
      // its writes rolled back with the record, and the key stays free. Nothing else may fail.
      for (const line of worker.logged({ status: "ROUTE_ERROR" }))
        expect(JSON.stringify(line.err)).toMatch(/Connection terminated|ECONNRESET|timeout/i);
      const unavailable = sent.filter(({ answer }) => answer.status !== 201);
      expect(unavailable.length).toBeGreaterThan(0);
      for (const { key, answer } of sent) {
        expect([201, 503, 500], `${key}: ${answer.status} ${answer.text}`).toContain(answer.status);
        if (answer.status === 503) {
          expect(errorCode(answer), key).toBe("STORE_UNAVAILABLE");
          expect(answer.ms, key).toBeLessThanOrEqual(BOUND_MS);
        }
      }

      // One commit per first request: an order row exists exactly when its SUCCESS record does, and nothing waits for recovery.
      expect(await processingKeys(db.pool, db.table)).toEqual([]);
      const committed = await committedKeys(db);
      const mine = (keys: Set<string>) => [...keys].filter((key) => key.startsWith(`${mode}-`)).sort();
      expect(mine(committed.orders)).toEqual(mine(committed.records));
      expect(doubleExecutions(committed.executions)).toBe(0);

      // Each refused request's retry either replays (its commit landed before the link died) or runs now: once either way.
      let replayedAfter503 = 0;
      for (const { key } of unavailable) {
        const retry = await post(key);
        expect(retry.status, key).toBe(201);
        if (isReplay(retry)) replayedAfter503++;
      }
      const after = await db.executions();
      for (const { key } of sent) expect(after.get(key), key).toBe(1);
      expect(await processingKeys(db.pool, db.table)).toEqual([]);
      const routeErrors = sent.filter(({ answer }) => answer.status === 500).length;
      notes.push(
        `${mode}: ${sent.length} sends; during the ${CUT_MS / 1000} s cut ${unavailable.length - routeErrors} answered 503 and ${routeErrors} the route's own connection error (500); ` +
          `their retries: ${replayedAfter503} replayed (commit had landed), ${unavailable.length - replayedAfter503} ran once`,
      );
      await worker.stop();
    },
  );
});
