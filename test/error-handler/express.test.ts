// Express over a real listener: every kind of error answered as problem+json, with and without the logger block.
import express from "express";
import { describe, expect, it } from "vitest";
import { problemDetails } from "@/blocks/error-handler/adapters/express";
import { requestId } from "@/blocks/logger/adapters/express";
import { captureLogs } from "@/blocks/logger/testing/capture-logs";
import { sendTo, serveDuringSuite } from "./support/http";
import {
  IdempotencyError,
  rateLimitError,
  unknownError,
  validationError,
  declinedError,
  downstreamError,
  SUITE_OPTIONS,
} from "./support/scenarios";
import { itAnswersEveryErrorAsAProblem } from "./support/suite";

describe.each([
  ["with the logger block's requestId()", true],
  ["without a request id middleware", false],
])("express %s", (_name, withRequestId) => {
  const { logger, lines } = captureLogs();
  const app = express();
  if (withRequestId) app.use(requestId());
  // What the cors middleware does on every response: the problem's own Vary must not replace it.
  app.use((_req, res, next) => void (res.vary("Origin"), next()));
  app.post("/in-progress", () => {
    throw new IdempotencyError("REQUEST_IN_PROGRESS", "A request with this key is still running.", 2);
  });
  app.post("/limited", () => {
    throw rateLimitError();
  });
  app.post("/validated", () => {
    throw validationError();
  });
  app.post("/parsed", express.json(), (req, res) => void res.json(req.body));
  app.post("/unknown", async () => {
    throw unknownError();
  });
  app.post("/declined", () => {
    throw declinedError();
  });
  app.post("/downstream", async () => {
    throw downstreamError();
  });
  const problems = problemDetails({ logger, ...SUITE_OPTIONS });
  app.use(problems.notFound);
  app.use(problems.onError);

  const baseUrl = serveDuringSuite(() => app.listen(0, "127.0.0.1"));

  itAnswersEveryErrorAsAProblem({ lines, send: sendTo(baseUrl) });

  it("keeps a middleware's Vary: Origin beside the problem's Accept-Language", async () => {
    expect((await sendTo(baseUrl)("GET", "/nowhere")).headers.vary).toBe("Origin, Accept-Language");
  });
});
