// Hono through app.request: every kind of error answered as problem+json, with and without the logger block.
import { Hono } from "hono";
import { validator } from "hono/validator";
import { describe } from "vitest";
import { problemDetails } from "@/blocks/error-handler/adapters/hono";
import { requestId } from "@/blocks/logger/adapters/hono";
import { captureLogs } from "@/blocks/logger/testing/capture-logs";
import { answerOf } from "./support/http";
import {
  IdempotencyError,
  rateLimitError,
  REQUEST_HEADERS,
  unknownError,
  validationError,
  declinedError,
  SUITE_OPTIONS,
} from "./support/scenarios";
import { itAnswersEveryErrorAsAProblem } from "./support/suite";

describe.each([
  ["with the logger block's requestId()", true],
  ["without a request id middleware", false],
])("hono %s", (_name, withRequestId) => {
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
