// Scenario 7: property-based hostile input over HTTP (keys, headers, bodies, paths, queries, credentials): a documented
// 4xx with a code, never a 500 (but for a request whose credentials the route cannot read: a setup error, never anonymous).
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_PAYLOAD_DEPTH } from "../../registry/idempotency/fingerprint";
import {
  authorizationValue,
  bareKey,
  escapeNonAscii,
  invalidKeyHeader,
  isJson,
  jsonObject,
  malformedJson,
  queryParameters,
  queryString,
  quotedKey,
  rawKeyBytes,
  serializeObject,
  twoPathSegments,
  unicodeValue,
} from "./support/bad-input-arbitraries";
import { FiguresCollector, doubleExecutions, sum } from "./support/figures";
import {
  closeClient,
  errorCode,
  send,
  sendHeadFirst,
  sendRaw,
  type HttpAnswer,
  type HttpRequest,
} from "./support/http-client";
import { startWorker, type WorkerProcess } from "./support/processes";
import { isReplay, outcomeOf } from "./support/replays";
import { openScenarioDb, type ScenarioDb } from "./support/scenario-db";
import { missingServices } from "./support/services";
import { executionsByScope, executionsOf, recordsByStatus } from "./support/tables";

const BODY_LIMIT = 100_000;

/** The `error.code` of a raw HTTP response's JSON body, if it has one. */
function rawErrorCode(text: string): string | undefined {
  const start = text.indexOf("{", text.indexOf("\r\n\r\n"));
  try {
    return (JSON.parse(text.slice(start, text.lastIndexOf("}") + 1)) as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
}
const RUNS = Number(process.env.RELIABILITY_PROPERTY_RUNS ?? 40);

describe.skipIf(missingServices())("[DATABASE_URL] 7. bad input (property-based, over HTTP)", () => {
  const figures = new FiguresCollector(7, "hostile keys, headers and bodies (fast-check), Express, Fastify and Hono");
  let db: ScenarioDb;
  let run = 0;

  beforeAll(async () => {
    db = await openScenarioDb("input");
  });
  afterAll(async () => {
    closeClient();
    if (db) {
      const executions = await executionsByScope(db.pool, db.effectsTable);
      figures.save({
        executions: sum(executions),
        doubleExecutions: doubleExecutions(executions),
        notes: `${RUNS} runs per property and framework`,
      });
      await db.close();
    }
  });

  describe.each(["express", "fastify", "hono"] as const)("%s", (framework) => {
    // Express and Fastify parse bodies before the adapter (the worker names their errors); Hono's
    // adapter parses the body itself and names a malformed one. Express's strict parser refuses a
    // bare JSON value such as `0`; Fastify and Hono accept any JSON value, so theirs must not be one.
    const invalidJsonCode = framework === "hono" ? "IDEMPOTENCY_PAYLOAD_INVALID" : "BODY_INVALID_JSON";
    const malformed = framework === "express" ? malformedJson : malformedJson.filter((text) => !isJson(text));
    // Fastify refuses `__proto__` members outright (prototype-poisoning protection): a 400 of its own.
    const plainJson = <T>(arbitrary: fc.Arbitrary<T>) =>
      framework === "fastify" ? arbitrary.filter((value) => !JSON.stringify(value).includes('"__proto__"')) : arbitrary;
    let worker: WorkerProcess;
    const answers: HttpAnswer[] = [];

    /** Each property run gets its own user, so generated keys never meet a record from another run; `null` sends no user. */
    const post = async (request: Omit<HttpRequest, "port">, user: string | null = `run-${run}`) => {
      const headers = user === null ? request.headers : { "x-user-id": user, ...request.headers };
      const answer = await send({ port: worker.port, body: { amount: 1 }, ...request, ...(headers && { headers }) });
      figures.record(answer.status, answer.ms, isReplay(answer));
      answers.push(answer);
      return answer;
    };
    const property = <T>(arbitrary: fc.Arbitrary<T>, check: (value: T) => Promise<void>) =>
      fc.assert(
        fc.asyncProperty(arbitrary, async (value) => {
          run++;
          await check(value);
        }),
        { numRuns: RUNS },
      );
    const expectRefused = (answer: HttpAnswer, status: number, code: string) => {
      expect({ status: answer.status, code: errorCode(answer) }).toEqual({ status, code });
    };
    /** Executed once, then replayed byte for byte. */
    const expectExecutedThenReplayed = async (first: HttpAnswer, second: HttpAnswer, key: string) => {
      expect([first.status, outcomeOf(first)]).toEqual([201, "executed"]);
      expect([second.status, outcomeOf(second)]).toEqual([201, "replayed"]);
      expect(second.text).toBe(first.text);
      expect(await executionsOf(db.pool, db.effectsTable, key, `run-${run}`)).toBe(1);
    };

    beforeAll(async () => {
      worker = await startWorker(
        "http-worker.ts",
        db.workerConfig(framework, { framework, bodyLimitBytes: BODY_LIMIT, logLevel: "warn" }),
      );
    });
    afterAll(async () => worker?.stop());

    describe("keys and headers", () => {
      it("executes any valid bare key once and replays it", async () => {
        await property(bareKey, async (key) =>
          expectExecutedThenReplayed(await post({ key }), await post({ key }), key),
        );
      });

      it("treats a quoted key (RFC 8941 string, escapes, surrounding whitespace) as the key it quotes", async () => {
        await property(quotedKey, async ({ key, header }) => {
          const first = await post({ key: header });
          const again = /[",]/.test(key) ? await post({ key: header }) : await post({ key });
          await expectExecutedThenReplayed(first, again, key);
        });
      });

      it("refuses empty, overlong, spaced, non-ASCII and malformed keys with 400 IDEMPOTENCY_KEY_INVALID", async () => {
        await property(invalidKeyHeader, async (header) =>
          expectRefused(await post({ key: header }), 400, "IDEMPOTENCY_KEY_INVALID"),
        );
      });

      it("refuses a repeated Idempotency-Key header, even with equal values", async () => {
        await property(fc.tuple(bareKey, fc.boolean()), async ([key, same]) => {
          expectRefused(await post({ key: [key, same ? key : `${key}x`] }), 400, "IDEMPOTENCY_KEY_INVALID");
        });
      });

      it("answers a missing key on a requireKey route with 400 IDEMPOTENCY_KEY_MISSING", async () => {
        expectRefused(await post({}), 400, "IDEMPOTENCY_KEY_MISSING");
      });

      it("refuses control bytes (Node's HTTP parser) and UTF-8 key bytes (the adapter) with 400, never a 5xx", async () => {
        await property(rawKeyBytes, async (bytes) => {
          const body = '{"amount":1}';
          const head = `POST /payments HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\nx-user-id: run-${run}\r\nIdempotency-Key: `;
          const answer = await sendRaw(
            worker.port,
            Buffer.concat([Buffer.from(head), bytes, Buffer.from(`\r\n\r\n${body}`)]),
          );
          figures.record(answer.status, 0);
          expect(answer.status).toBe(400);
          // Bytes the parser lets through (obs-text) reach the adapter, which must name the problem
          // (the server's own refusal, e.g. Fastify's `{ "error": "Bad Request" }`, has no code).
          const json = answer.text.indexOf('{"error":{');
          if (json >= 0) expect(JSON.parse(answer.text.slice(json)).error.code).toBe("IDEMPOTENCY_KEY_INVALID");
        });
      });
    });

    describe("bodies", () => {
      it("never lets member order matter: a reordered body replays", async () => {
        await property(plainJson(jsonObject), async (object) => {
          const entries = Object.entries(object);
          const key = `order-${run}`;
          const first = await post({ key, rawBody: serializeObject(entries) });
          await expectExecutedThenReplayed(
            first,
            await post({ key, rawBody: serializeObject([...entries].reverse()) }),
            key,
          );
        });
      });

      it("fingerprints unicode by value: astral, combining, RTL and lone surrogates replay, escaped or not", async () => {
        await property(plainJson(unicodeValue), async (value) => {
          const key = `unicode-${run}`;
          const json = JSON.stringify({ amount: 1, memo: value });
          await expectExecutedThenReplayed(
            await post({ key, rawBody: json }),
            await post({ key, rawBody: escapeNonAscii(json) }),
            key,
          );
        });
      });

      it(`refuses bodies nested deeper than ${MAX_PAYLOAD_DEPTH} levels with 400 IDEMPOTENCY_PAYLOAD_INVALID, and accepts the rest`, async () => {
        await property(
          fc.oneof(
            fc.integer({ min: 1, max: 600 }),
            fc.integer({ min: MAX_PAYLOAD_DEPTH - 3, max: MAX_PAYLOAD_DEPTH + 3 }),
            fc.constant(20_000),
          ),
          async (depth) => {
            const key = `deep-${run}`;
            // The innermost value sits at depth `depth + 1` below the body object.
            const answer = await post({
              key,
              rawBody: `{"amount":1,"nest":${"[".repeat(depth)}1${"]".repeat(depth)}}`,
            });
            if (depth + 1 > MAX_PAYLOAD_DEPTH) expectRefused(answer, 400, "IDEMPOTENCY_PAYLOAD_INVALID");
            else expect([answer.status, outcomeOf(answer)]).toEqual([201, "executed"]);
          },
        );
      });

      it(`refuses bodies beyond the framework's limit (${BODY_LIMIT} bytes) with 413 BODY_TOO_LARGE before any idempotency decision`, async () => {
        await property(fc.integer({ min: BODY_LIMIT + 1, max: 20 * BODY_LIMIT }), async (size) => {
          const body = `{"amount":1,"pad":"${"x".repeat(size - '{"amount":1,"pad":""}'.length)}"}`;
          // Raw, head first: a framework that refuses on Content-Length closes while a client would still be sending.
          const head = `POST /payments HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\nConnection: close\r\nx-user-id: run-${run}\r\nIdempotency-Key: huge-${run}\r\n\r\n`;
          const answer = await sendHeadFirst(worker.port, head, body);
          figures.record(answer.status, 0);
          expect({ status: answer.status, code: rawErrorCode(answer.text) }).toEqual({
            status: 413,
            code: "BODY_TOO_LARGE",
          });
          expect(await executionsOf(db.pool, db.effectsTable, `huge-${run}`, `run-${run}`)).toBe(0);
        });
      });

      it(`refuses malformed JSON with 400 ${invalidJsonCode}, and runs nothing`, async () => {
        await property(malformed, async (text) =>
          expectRefused(await post({ key: `malformed-${run}`, rawBody: text }), 400, invalidJsonCode),
        );
      });
    });

    describe("paths, queries and credentials (issue 12)", () => {
      const withdrawals = (account: string, query = "") => `/accounts/${account}/withdrawals${query && `?${query}`}`;

      it("answers one key sent to two accounts 409, never the first account's replay, under one bounded operation", async () => {
        await property(twoPathSegments, async ([a, b]) => {
          const key = `path-${run}`;
          const first = await post({ key, path: withdrawals(a) });
          expect([first.status, outcomeOf(first), first.headers["x-idempotency-operation"]]).toEqual([
            201,
            "executed",
            "POST /accounts/:account/withdrawals",
          ]);
          expectRefused(await post({ key, path: withdrawals(b) }), 409, "KEY_REUSED_WITH_DIFFERENT_REQUEST");
          const again = await post({ key, path: withdrawals(a) });
          expect([again.status, outcomeOf(again), again.text]).toEqual([201, "replayed", first.text]);
          expect(await executionsOf(db.pool, db.effectsTable, key, `run-${run}`)).toBe(1);
        });
      });

      it("replays the same query in any parameter order, and answers a changed value 409", async () => {
        await property(queryParameters, async (parameters) => {
          const key = `query-${run}`;
          const first = await post({ key, path: withdrawals("acct", queryString(parameters)) });
          await expectExecutedThenReplayed(
            first,
            await post({ key, path: withdrawals("acct", queryString([...parameters].reverse())) }),
            key,
          );
          const changed = parameters.map(([name, value], i): [string, string] => [name, i === 0 ? `${value}x` : value]);
          expectRefused(
            await post({ key, path: withdrawals("acct", queryString(changed)) }),
            409,
            "KEY_REUSED_WITH_DIFFERENT_REQUEST",
          );
        });
      });

      it("refuses credentials it cannot read as a user (500 IDEMPOTENCY_SETUP): never the anonymous scope, nothing runs", async () => {
        await property(authorizationValue, async (authorization) => {
          const key = `credentials-${run}`;
          expectRefused(
            await post({ key, path: "/signed-in/payments", headers: { authorization } }, null),
            500,
            "IDEMPOTENCY_SETUP",
          );
          expect(await executionsOf(db.pool, db.effectsTable, key)).toBe(0);
        });
      });

      it("scopes a request with a readable user to that user, whatever its Authorization value", async () => {
        await property(fc.tuple(authorizationValue, authorizationValue), async ([first, second]) => {
          const key = `signed-in-${run}`;
          const executed = await post({ key, path: "/signed-in/payments", headers: { authorization: first } });
          await expectExecutedThenReplayed(
            executed,
            await post({ key, path: "/signed-in/payments", headers: { authorization: second } }),
            key,
          );
        });
      });
    });

    it("never answered 5xx (but the deliberate setup errors), and left no record PROCESSING", async () => {
      expect(answers.length).toBeGreaterThan(0);
      const unexpected = answers.filter(
        (answer) => (answer.status >= 500 && errorCode(answer) !== "IDEMPOTENCY_SETUP") || answer.status <= 0,
      );
      expect(unexpected.map((answer) => `${answer.status} ${answer.text}`)).toEqual([]);
      expect((await recordsByStatus(db.pool, db.table)).PROCESSING ?? 0).toBe(0);
      expect(worker.logged({ status: "ROUTE_ERROR" })).toEqual([]);
      expect(worker.alive).toBe(true);
    });
  });
});
