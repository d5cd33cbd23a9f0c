// Scenario 6: the link to Redis is cut mid-load (unreachable, then refused) and restored; answers stay correct.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBounded, sleep } from "./support/bounded";
import { FiguresCollector, doubleExecutions, sum } from "./support/figures";
import { closeClient, send } from "./support/http-client";
import { startWorker, type WorkerProcess } from "./support/processes";
import { isReplay } from "./support/replays";
import { openScenarioDb, type ScenarioDb } from "./support/scenario-db";
import { addressOf, missingServices, requireRedisUrl, viaAddress } from "./support/services";
import { counter, statsOf } from "./support/stats";
import { TcpProxy } from "./support/tcp-proxy";

const CACHE_TIMEOUT_MS = 200;
/** A cache read and a cache write may each time out; the rest is slack for a busy 2-core machine. */
const BOUND_MS = 2 * CACHE_TIMEOUT_MS + 2_000;
const CUT_MS = 3_000;
const body = { amount: 5_000, currency: "JPY" };

describe.skipIf(missingServices({ redis: true }))(
  "[DATABASE_URL, REDIS_URL] 6. cache outage (Redis link cut mid-load)",
  () => {
    const figures = new FiguresCollector(6, "Redis link cut mid-load (unreachable, then refused), restored");
    let db: ScenarioDb;
    let proxy: TcpProxy;
    let worker: WorkerProcess;
    const stored = new Map<string, string>();

    const post = async (key: string) => {
      const answer = await send({ port: worker.port, key, body });
      figures.record(answer.status, answer.ms, isReplay(answer));
      return answer;
    };

    beforeAll(async () => {
      db = await openScenarioDb("cache");
      const redisUrl = requireRedisUrl();
      proxy = await TcpProxy.start(addressOf(redisUrl, 6379));
      worker = await startWorker(
        "http-worker.ts",
        db.workerConfig("app", {
          redisUrl: viaAddress(redisUrl, proxy.port),
          handler: { cacheTimeoutMs: CACHE_TIMEOUT_MS },
          logLevel: "error",
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
          notes: `two cuts of ${CUT_MS / 1000} s; cacheTimeoutMs ${CACHE_TIMEOUT_MS}`,
        });
        await db.close();
      }
    });

    it.each(["blackhole", "reset"] as const)(
      "%s: every answer stays correct, the cache error counter rises, latency stays bounded",
      async (mode) => {
        for (let i = 0; i < 20; i++) {
          const answer = await post(`${mode}-warm-${i}`);
          expect(answer.status).toBe(201);
          stored.set(`${mode}-warm-${i}`, answer.text);
        }
        const before = await statsOf(worker);

        const problems: string[] = [];
        let loading = true;
        let fresh = 0;
        const known = [...stored.keys()];
        const load = runBounded(20_000, 8, 30_000, async (i) => {
          if (!loading) return;
          if (i % 2 === 0) {
            const key = `${mode}-fresh-${fresh++}`;
            const answer = await post(key);
            if (answer.status !== 201 || isReplay(answer)) problems.push(`${key}: ${answer.status} ${answer.text}`);
            else stored.set(key, answer.text);
          } else {
            const key = known[i % known.length]!;
            const answer = await post(key);
            if (answer.status !== 201 || answer.text !== stored.get(key))
              problems.push(`${key}: replay ${answer.status} ${answer.text}`);
          }
        });
        await sleep(1_000);
        proxy.cut(mode);
        await sleep(CUT_MS);
        const duringCut = await statsOf(worker);
        proxy.restore();
        // Once Redis is back, replays are served from it again.
        await expect
          .poll(async () => (await post(known[0]!), counter(await statsOf(worker), "cacheHits")), {
            timeout: 15_000,
            interval: 250,
          })
          .toBeGreaterThan(counter(duringCut, "cacheHits"));
        await sleep(500);
        loading = false;
        await load;

        expect(problems).toEqual([]);
        expect(counter(duringCut, "cacheErrors")).toBeGreaterThan(counter(before, "cacheErrors"));
        expect(figures.p99()).toBeLessThanOrEqual(BOUND_MS);
        const executions = await db.executions();
        expect(doubleExecutions(executions)).toBe(0);
        for (const key of stored.keys()) expect(executions.get(key), key).toBe(1);
        expect(worker.alive).toBe(true);
      },
    );
  },
);
