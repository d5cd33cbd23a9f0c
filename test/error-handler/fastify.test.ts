// Fastify through inject: every kind of error answered as problem+json, with and without the logger block.
import Fastify from "fastify";
import { beforeAll, describe, expect, it } from "vitest";
import { problemDetailsPlugin } from "@/blocks/error-handler/adapters/fastify";
import { requestIdPlugin } from "@/blocks/logger/adapters/fastify";
import { captureLogs } from "@/blocks/logger/testing/capture-logs";
import {
  expectProblem,
  IdempotencyError,
  rateLimitError,
  REQUEST_HEADERS,
  unknownError,
  validationError,
  type Answer,
  declinedError,
  downstreamError,
  SUITE_OPTIONS,
} from "./support/scenarios";
import { itAnswersEveryErrorAsAProblem } from "./support/suite";

describe.each([
  ["with the logger block's requestIdPlugin", true],
  ["with Fastify's own request ids", false],
])("fastify %s", (_name, withRequestId) => {
  const { logger, lines } = captureLogs();
  // Fastify's default ids ("req-1") are not UUIDs; a UUID generator keeps the shared checks one.
  const app = Fastify({ genReqId: () => crypto.randomUUID() });

  beforeAll(async () => {
    if (withRequestId) await app.register(requestIdPlugin);
    await app.register(problemDetailsPlugin, { logger, ...SUITE_OPTIONS });
    app.post("/in-progress", async () => {
      throw new IdempotencyError("REQUEST_IN_PROGRESS", "A request with this key is still running.", 2);
    });
    app.post("/limited", async () => {
      throw rateLimitError();
    });
    app.post("/validated", async () => {
      throw validationError();
    });
    app.post(
      "/schema",
      { schema: { body: { type: "object", properties: { password: { type: "string", minLength: 10 } } } } },
      async () => "ok",
    );
    app.post("/parsed", async (request) => request.body);
    app.post("/unknown", async () => {
      throw unknownError();
    });
    app.post("/declined", async () => {
      throw declinedError();
    });
    app.post("/downstream", async () => {
      throw downstreamError();
    });
    await app.ready();
  });

  async function send(method: "GET" | "POST", url: string, payload?: string): Promise<Answer> {
    const res = await app.inject({
      method,
      url,
      headers: { ...REQUEST_HEADERS, "content-type": "application/json" },
      ...(payload === undefined ? {} : { payload }),
    });
    const headers = Object.fromEntries(
      Object.entries(res.headers).map(([name, value]) => [name, value === undefined ? undefined : String(value)]),
    );
    return { status: res.statusCode, headers, text: res.body };
  }

  itAnswersEveryErrorAsAProblem({ lines, send });

  it("Fastify schema validation: 422 with Ajv's issues, not the rejected value", async () => {
    const body = expectProblem(await send("POST", "/schema", '{"password":"hunter2"}'), lines, {
      status: 422,
      code: "VALIDATION_FAILED",
    });
    expect(body.issues).toEqual([
      {
        path: ["password"],
        pointer: "/password",
        message: "must NOT have fewer than 10 characters",
        code: "minLength",
      },
    ]);
  });
});
