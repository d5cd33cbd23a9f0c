// Scenario 1: four OS processes serving HTTP on one PostgreSQL (and, with MYSQL_URL, on MariaDB / MySQL through
// MySqlStore); 200 keys, each sent 20 times at once across them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FiguresCollector, doubleExecutions, sum } from "./support/figures";
import { closeClient, errorCode, send, type HttpAnswer } from "./support/http-client";
import { isReplay } from "./support/replays";
import { startWorker, stopAll, type WorkerProcess } from "./support/processes";
import { openScenarioDb, type ScenarioDb } from "./support/scenario-db";
import { missingServices } from "./support/services";

const PROCESSES = 4;
const KEYS = 200;
const SENDS_PER_KEY = 20;
const KEYS_PER_WAVE = 10;

const STORES = [
  { label: "", mysqlUrl: undefined, figure: 1 },
  ...(process.env.MYSQL_URL
    ? [{ label: " on MySqlStore [MYSQL_URL]", mysqlUrl: process.env.MYSQL_URL, figure: 1.1 }]
    : []),
];

describe.skipIf(missingServices()).each(STORES)(
  "[DATABASE_URL] 1. cross-process races$label",
  ({ mysqlUrl, figure, label }) => {
    const figures = new FiguresCollector(
      figure,
      `${PROCESSES} processes, ${KEYS} keys x ${SENDS_PER_KEY} concurrent sends (wrapper and capture style)${label}`,
    );
    const workers: WorkerProcess[] = [];
    let db: ScenarioDb;

    beforeAll(async () => {
      db = await openScenarioDb("race", mysqlUrl);
      const started = await Promise.all(
        Array.from({ length: PROCESSES }, (_, i) =>
          startWorker(
            "http-worker.ts",
            db.workerConfig(`p${i}`, { framework: "express", pool: { max: 5 }, logLevel: "warn" }),
          ),
        ),
      );
      workers.push(...started);
    });
    afterAll(async () => {
      await stopAll(workers);
      closeClient();
      if (db) {
        const executions = await db.executions();
        figures.save({ executions: sum(executions), doubleExecutions: doubleExecutions(executions) });
        await db.close();
      }
    });

    it("runs every key's operation exactly once; every answer is the stored response or 409 in progress; no 5xx", async () => {
      const answers = new Map<string, HttpAnswer[]>();
      // Even keys go to the wrapper-style route, odd ones to the capture-style route.
      const pathOf = (key: string) => (Number(key.slice(5)) % 2 === 0 ? "/payments" : "/captured");
      const sendOnce = async (key: string, i: number) => {
        const answer = await send({
          port: workers[i % PROCESSES]!.port,
          path: pathOf(key),
          key,
          body: { amount: 100, holdMs: 20 },
        });
        figures.record(answer.status, answer.ms, isReplay(answer));
        answers.get(key)!.push(answer);
      };
      for (let wave = 0; wave < KEYS / KEYS_PER_WAVE; wave++) {
        const keys = Array.from({ length: KEYS_PER_WAVE }, (_, k) => `race-${wave * KEYS_PER_WAVE + k}`);
        for (const key of keys) answers.set(key, []);
        // Each key's 20 sends leave together, spread over the four processes.
        await Promise.all(keys.flatMap((key) => Array.from({ length: SENDS_PER_KEY }, (_, i) => sendOnce(key, i))));
      }

      const executions = await db.executions();
      expect(executions.size).toBe(KEYS);
      expect([...executions.values()].every((n) => n === 1)).toBe(true);

      for (const [key, sent] of answers) {
        const statuses = new Set(sent.map((answer) => answer.status));
        expect(
          [...statuses].every((status) => status === 201 || status === 409),
          `${key}: ${[...statuses]}`,
        ).toBe(true);
        const stored = sent.filter((answer) => answer.status === 201);
        expect(stored.length, key).toBeGreaterThanOrEqual(1);
        expect(new Set(stored.map((answer) => answer.text)).size, `${key}: every 201 carries the same bytes`).toBe(1);
        for (const conflict of sent.filter((answer) => answer.status === 409)) {
          expect(errorCode(conflict)).toBe("REQUEST_IN_PROGRESS");
          expect(conflict.headers["retry-after"]).toBe("1");
        }
      }

      // Afterwards every key replays its one stored response, from whichever process.
      for (const [key, sent] of answers) {
        const replay = await send({
          port: workers[Number(key.slice(5)) % PROCESSES]!.port,
          path: pathOf(key),
          key,
          body: { amount: 100, holdMs: 20 },
        });
        figures.record(replay.status, replay.ms, isReplay(replay));
        expect(replay.status).toBe(201);
        expect(replay.text).toBe(sent.find((answer) => answer.status === 201)!.text);
      }
      expect(await db.recordsByStatus()).toEqual({ SUCCESS: KEYS });
      expect(workers.every((worker) => worker.alive)).toBe(true);
    });
  },
);
