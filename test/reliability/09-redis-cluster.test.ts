// Scenario 9: RedisStore on a local three-master Redis Cluster: four processes racing on the same keys,
// then a master killed mid-load and restarted (AOF, fsync always).
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedisCluster, type LocalRedisCluster } from "../idempotency/support/redis-cluster";
import { FiguresCollector } from "./support/figures";
import { closeClient, errorCode, send, type HttpAnswer } from "./support/http-client";
import { isReplay } from "./support/replays";
import { startWorker, stopAll, type WorkerProcess } from "./support/processes";
import { redisUrl } from "./support/services";

const PROCESSES = 4;
const RACE_KEYS = 100;
const SENDS_PER_KEY = 10;
const OUTAGE_KEYS = 240;

describe.skipIf(!redisUrl)("[REDIS_URL] 9. RedisStore on a Redis Cluster (races, a master killed)", () => {
  const figures = new FiguresCollector(
    9,
    `RedisStore on a 3-master Redis Cluster: ${PROCESSES} processes, ${RACE_KEYS} keys x ${SENDS_PER_KEY} concurrent sends, then ${OUTAGE_KEYS} keys with a master killed and restarted`,
  );
  const run = randomUUID().slice(0, 8);
  const effectsPrefix = `reliability:09:${run}:effects`;
  const workers: WorkerProcess[] = [];
  let cluster: LocalRedisCluster;
  let effects: Redis;

  const executions = async (keys: string[]) => {
    const counts = await effects.mget(...keys.map((key) => `${effectsPrefix}:${key}`));
    return new Map(keys.map((key, i) => [key, Number(counts[i] ?? 0)]));
  };
  const sendKey = async (key: string, i: number) => {
    const answer = await send({
      port: workers[i % PROCESSES]!.port,
      key,
      body: { amount: 100, holdMs: 20 },
      timeoutMs: 10_000,
    });
    figures.record(answer.status, answer.ms, isReplay(answer));
    return answer;
  };
  const allKeys: string[] = [];

  beforeAll(async () => {
    cluster = await startRedisCluster({ serverArgs: ["--save", "", "--appendonly", "yes", "--appendfsync", "always"] });
    effects = new Redis(redisUrl as string, { maxRetriesPerRequest: 1 });
    const config = (i: number) => ({
      workerId: `p${i}`,
      storeUrl: cluster.ports.map((port) => `redis://127.0.0.1:${port}`).join(","),
      effectsUrl: redisUrl as string,
      table: `reliability:09:${run}:`,
      effectsTable: effectsPrefix,
      // Long enough for a loaded CI machine; a dead master fails faster than this (connection refused).
      handler: { storeTimeoutMs: 2_000, completionAttempts: 2 },
    });
    workers.push(
      ...(await Promise.all(
        Array.from({ length: PROCESSES }, (_, i) => startWorker("redis-store-worker.ts", config(i))),
      )),
    );
  }, 60_000);

  afterAll(async () => {
    await stopAll(workers);
    closeClient();
    if (effects) {
      const counts = [...(await executions(allKeys)).values()];
      figures.save({
        executions: counts.reduce((a, b) => a + b, 0),
        doubleExecutions: counts.filter((n) => n > 1).length,
        notes: "AOF with appendfsync always; with AOF off the same kill made keys run twice (see STORES.md)",
      });
      let cursor = "0";
      do {
        const [next, keys] = await effects.scan(cursor, "MATCH", `${effectsPrefix}:*`, "COUNT", 1000);
        cursor = next;
        if (keys.length) await effects.unlink(...keys);
      } while (cursor !== "0");
      effects.disconnect();
    }
    await cluster?.stop();
  });

  it("runs every key once across processes; every answer is the stored response or 409 in progress", async () => {
    const keys = Array.from({ length: RACE_KEYS }, (_, k) => `race-${run}-${k}`);
    allKeys.push(...keys);
    const answers = new Map<string, HttpAnswer[]>();
    for (let wave = 0; wave < RACE_KEYS / 10; wave++) {
      const waveKeys = keys.slice(wave * 10, wave * 10 + 10);
      await Promise.all(
        waveKeys.flatMap((key) =>
          Array.from({ length: SENDS_PER_KEY }, async (_, i) => {
            const answer = await sendKey(key, i);
            answers.set(key, [...(answers.get(key) ?? []), answer]);
          }),
        ),
      );
    }
    expect([...(await executions(keys)).values()].every((n) => n === 1)).toBe(true);
    for (const [key, sent] of answers) {
      expect(
        sent
          .filter((a) => !(a.status === 201 || (a.status === 409 && errorCode(a) === "REQUEST_IN_PROGRESS")))
          .map((a) => `${a.status} ${a.text}`),
        key,
      ).toEqual([]);
      expect(new Set(sent.filter((a) => a.status === 201).map((a) => a.text)).size, key).toBe(1);
    }
  });

  it("answers only 201, 409 REQUEST_IN_PROGRESS or 503 STORE_UNAVAILABLE while a master is down, and runs no key twice after it returns", async () => {
    const keys = Array.from({ length: OUTAGE_KEYS }, (_, k) => `outage-${run}-${k}`);
    allKeys.push(...keys);
    const documented = (a: HttpAnswer) =>
      a.status === 201 ||
      (a.status === 409 && errorCode(a) === "REQUEST_IN_PROGRESS") ||
      (a.status === 503 && errorCode(a) === "STORE_UNAVAILABLE");
    const during: HttpAnswer[] = [];
    let next = 0;
    let killed: Promise<void> | undefined;
    await Promise.all(
      Array.from({ length: 12 }, async (_, lane) => {
        while (next < keys.length) {
          const index = next++;
          if (index === OUTAGE_KEYS / 3) killed = cluster.kill(cluster.ports[1] as number);
          during.push(await sendKey(keys[index] as string, lane));
        }
      }),
    );
    await killed;
    expect(during.filter((a) => a.status === 503).length).toBeGreaterThan(0);
    expect(during.filter((a) => !documented(a)).map((a) => `${a.status} ${a.text}`)).toEqual([]);

    await cluster.restart(cluster.ports[1] as number);
    const after = await Promise.all(
      keys.map(async (key, i) => {
        for (let attempt = 0; ; attempt++) {
          const answer = await sendKey(key, i);
          if (answer.status !== 503 || attempt === 40) return answer;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }),
    );
    expect(after.filter((a) => !documented(a) || a.status === 503).map((a) => `${a.status} ${a.text}`)).toEqual([]);
    expect([...(await executions(keys)).values()].filter((n) => n > 1)).toEqual([]);
    expect(after.filter((a) => a.status === 201).length).toBeGreaterThan(OUTAGE_KEYS / 2);
  });
});
