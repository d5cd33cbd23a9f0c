// Fastify through inject: every kind of error answered as problem+json, with and without the logger block.
import Fastify from "fastify";
import { beforeAll, describe, expect, it } from "vitest";
import { problemDetailsPlugin } from "@/blocks/error-handler/adapters/fastify";
import { requestIdPlugin } from "@/blocks/logger/middleware/fastify";
import { captureLogs } from "@/blocks/logger/testing/capture-logs";
import { expectProblem, expectServerErrorLogged, IdempotencyError, rateLimitError, REQUEST_HEADERS, unknownError, validationError, type Answer } from "./support/scenarios";

describe.each([
  ["with the logger block's requestIdPlugin", true],
  ["with Fastify's own request ids", false],
])("fastify %s", (_name, withRequestId) => {
  const { logger, lines } = captureLogs();
  // Fastify's default ids ("req-1") are not UUIDs; a UUID generator keeps the shared checks one.
  const app = Fastify({ genReqId: () => crypto.randomUUID() });

  beforeAll(async () => {
    if (withRequestId) await app.register(requestIdPlugin);
    await app.register(problemDetailsPlugin, { logger });
    app.post("/in-progress", async () => {
      throw new IdempotencyError("REQUEST_IN_PROGRESS", "A request with this key is still running.", 2);
    });
    app.post("/limited", async () => {
      throw rateLimitError();
    });
    app.post("/validated", async () => {
      throw validationError();
    });
    app.post("/schema", { schema: { body: { type: "object", properties: { password: { type: "string", minLength: 10 } } } } }, async () => "ok");
    app.post("/parsed", async (request) => request.body);
    app.post("/unknown", async () => {
      throw unknownError();
    });
    await app.ready();
  });

  async function send(method: "GET" | "POST", url: string, payload?: string): Promise<Answer> {
    const res = await app.inject({ method, url, headers: { ...REQUEST_HEADERS, "content-type": "application/json" }, ...(payload === undefined ? {} : { payload }) });
    const headers = Object.fromEntries(Object.entries(res.headers).map(([name, value]) => [name, value === undefined ? undefined : String(value)]));
    return { status: res.statusCode, headers, text: res.body };
  }

  it("IdempotencyError REQUEST_IN_PROGRESS: 409 with Retry-After", async () => {
    const answer = await send("POST", "/in-progress", "{}");
    expect(expectProblem(answer, lines, { status: 409, code: "REQUEST_IN_PROGRESS" }).detail).toBe("A request with this key is still running.");
    expect(answer.headers["retry-after"]).toBe("2");
  });

  it("RATE_LIMITED: 429 with its Retry-After and RateLimit headers", async () => {
    const answer = await send("POST", "/limited", "{}");
    expectProblem(answer, lines, { status: 429, code: "RATE_LIMITED" });
    expect(answer.headers).toMatchObject({ "retry-after": "12", "ratelimit-policy": '"payments";q=10;w=60', ratelimit: '"payments";r=0;t=12' });
  });

  it("validation error: 422 with its issues, not the rejected value", async () => {
    const body = expectProblem(await send("POST", "/validated", "{}"), lines, { status: 422, code: "VALIDATION_FAILED" });
    expect(body.issues).toEqual([{ path: ["password"], message: "Too short", code: "too_small" }]);
  });

  it("Fastify schema validation: 422 with Ajv's issues, not the rejected value", async () => {
    const body = expectProblem(await send("POST", "/schema", '{"password":"hunter2"}'), lines, { status: 422, code: "VALIDATION_FAILED" });
    expect(body.issues).toEqual([{ path: ["password"], message: "must NOT have fewer than 10 characters", code: "minLength" }]);
  });

  it("malformed JSON body: 400, the body not echoed", async () => {
    expectProblem(await send("POST", "/parsed", '{"password":"hunter2"'), lines, { status: 400, code: "MALFORMED_REQUEST_BODY" });
  });

  it("unknown route: 404", async () => {
    expect(expectProblem(await send("GET", "/nowhere?token=hunter2"), lines, { status: 404, code: "NOT_FOUND" }).instance).toBe("/nowhere");
  });

  it("unknown error: 500 with a generic detail; name, message and code in the log", async () => {
    const body = expectProblem(await send("POST", "/unknown", "{}"), lines, { status: 500, code: "INTERNAL_ERROR" });
    expectServerErrorLogged(lines, body.requestId);
  });
});
