// Hono through app.request: every kind of error answered as problem+json, with and without the logger block.
import { Hono } from "hono";
import { validator } from "hono/validator";
import { describe, expect, it } from "vitest";
import { problemDetails } from "@/blocks/error-handler/adapters/hono";
import { requestId } from "@/blocks/logger/middleware/hono";
import { captureLogs } from "@/blocks/logger/testing/capture-logs";
import { expectProblem, expectServerErrorLogged, IdempotencyError, rateLimitError, REQUEST_HEADERS, unknownError, validationError, type Answer } from "./support/scenarios";

describe.each([
  ["with the logger block's requestId()", true],
  ["without a request id middleware", false],
])("hono %s", (_name, withRequestId) => {
  const { logger, lines } = captureLogs();
  const app = new Hono();
  const problems = problemDetails({ logger });
  app.onError(problems.onError);
  app.notFound(problems.notFound);
  if (withRequestId) app.use(requestId());
  app.post("/in-progress", () => {
    throw new IdempotencyError("REQUEST_IN_PROGRESS", "A request with this key is still running.", 2);
  });
  app.post("/limited", () => {
    throw rateLimitError();
  });
  app.post("/validated", () => {
    throw validationError();
  });
  app.post("/parsed", validator("json", (body) => body), (c) => c.json(c.req.valid("json")));
  app.post("/unknown", async () => {
    throw unknownError();
  });

  async function send(method: string, path: string, body?: string): Promise<Answer> {
    const res = await app.request(path, { method, headers: { ...REQUEST_HEADERS, "content-type": "application/json" }, ...(body === undefined ? {} : { body }) });
    return { status: res.status, headers: Object.fromEntries(res.headers), text: await res.text() };
  }

  it("IdempotencyError REQUEST_IN_PROGRESS: 409 with Retry-After", async () => {
    const answer = await send("POST", "/in-progress");
    expect(expectProblem(answer, lines, { status: 409, code: "REQUEST_IN_PROGRESS" }).detail).toBe("A request with this key is still running.");
    expect(answer.headers["retry-after"]).toBe("2");
  });

  it("RATE_LIMITED: 429 with its Retry-After and RateLimit headers", async () => {
    const answer = await send("POST", "/limited");
    expectProblem(answer, lines, { status: 429, code: "RATE_LIMITED" });
    expect(answer.headers).toMatchObject({ "retry-after": "12", "ratelimit-policy": '"payments";q=10;w=60', ratelimit: '"payments";r=0;t=12' });
  });

  it("validation error: 422 with its issues, not the rejected value", async () => {
    const body = expectProblem(await send("POST", "/validated"), lines, { status: 422, code: "VALIDATION_FAILED" });
    expect(body.issues).toEqual([{ path: ["password"], message: "Too short", code: "too_small" }]);
  });

  it("malformed JSON body (hono/validator): 400, the body not echoed", async () => {
    expectProblem(await send("POST", "/parsed", '{"password":"hunter2"'), lines, { status: 400, code: "MALFORMED_REQUEST_BODY" });
  });

  it("unknown route: 404", async () => {
    expect(expectProblem(await send("GET", "/nowhere?token=hunter2"), lines, { status: 404, code: "NOT_FOUND" }).instance).toBe("/nowhere");
  });

  it("unknown error: 500 with a generic detail; name, message and code in the log", async () => {
    const body = expectProblem(await send("POST", "/unknown"), lines, { status: 500, code: "INTERNAL_ERROR" });
    expectServerErrorLogged(lines, body.requestId);
  });
});
