// Hono through app.request, and served by @hono/node-server: every kind of error answered as problem+json, with and
// without the logger block.
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { validator } from "hono/validator";
import { describe, expect, it } from "vitest";
import { problemDetails } from "@/blocks/error-handler/adapters/hono";
import { requestId } from "@/blocks/logger/adapters/hono";
import { captureLogs } from "@/blocks/logger/testing/capture-logs";
import { answerOf, sendTo, serveDuringSuite } from "./support/http";
import {
  IdempotencyError,
  rateLimitError,
  REQUEST_HEADERS,
  unknownError,
  validationError,
  declinedError,
  downstreamError,
  SUITE_OPTIONS,
} from "./support/scenarios";
import { itAnswersEveryErrorAsAProblem } from "./support/suite";

function problemApp(withRequestId: boolean) {
  const { logger, lines } = captureLogs();
  const app = new Hono();
  const problems = problemDetails({ logger, ...SUITE_OPTIONS });
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
  app.post(
    "/parsed",
    validator("json", (body) => body),
    (c) => c.json(c.req.valid("json")),
  );
  app.post("/unknown", async () => {
    throw unknownError();
  });
  app.post("/declined", () => {
    throw declinedError();
  });
  app.post("/downstream", async () => {
    throw downstreamError();
  });
  return { app, lines };
}

describe.each([
  ["with the logger block's requestId()", true],
  ["without a request id middleware", false],
])("hono %s", (_name, withRequestId) => {
  const { app, lines } = problemApp(withRequestId);

  itAnswersEveryErrorAsAProblem({
    lines,
    send: async (method, path, body) =>
      answerOf(
        await app.request(path, {
          method,
          headers: { ...REQUEST_HEADERS, "content-type": "application/json" },
          ...(body === undefined ? {} : { body }),
        }),
      ),
  });
});

// Under @hono/node-server the adapter reads the request's headers from Node's own IncomingMessage (c.env.incoming).
describe("hono served by @hono/node-server, without a request id middleware", () => {
  const { app, lines } = problemApp(false);
  const baseUrl = serveDuringSuite(() => serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server);

  itAnswersEveryErrorAsAProblem({ lines, send: sendTo(baseUrl) });

  it("takes a safe x-request-id, and makes a UUID for an unsafe or a repeated one", async () => {
    const requestIdOf = async (headers: [string, string][]) => {
      const res = await fetch(`${baseUrl()}/in-progress`, { method: "POST", headers });
      return ((await res.json()) as { requestId: string }).requestId;
    };
    expect(await requestIdOf([["x-request-id", "req_01HZX"]])).toBe("req_01HZX");
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect(await requestIdOf([["x-request-id", "a b"]])).toMatch(uuid);
    expect(
      await requestIdOf([
        ["x-request-id", "req_1"],
        ["x-request-id", "req_2"],
      ]),
    ).toMatch(uuid);
  });
});
