// Express over a real listener: every kind of error answered as problem+json, with and without the logger block.
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe } from "vitest";
import { problemDetails } from "@/blocks/error-handler/adapters/express";
import { requestId } from "@/blocks/logger/middleware/express";
import { captureLogs } from "@/blocks/logger/testing/capture-logs";
import { IdempotencyError, rateLimitError, REQUEST_HEADERS, unknownError, validationError } from "./support/scenarios";
import { itAnswersEveryErrorAsAProblem } from "./support/suite";

describe.each([
  ["with the logger block's requestId()", true],
  ["without a request id middleware", false],
])("express %s", (_name, withRequestId) => {
  const { logger, lines } = captureLogs();
  const app = express();
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
  app.post("/parsed", express.json(), (req, res) => void res.json(req.body));
  app.post("/unknown", async () => {
    throw unknownError();
  });
  const problems = problemDetails({ logger });
  app.use(problems.notFound);
  app.use(problems.onError);

  let server: Server;
  let baseUrl = "";
  beforeAll(async () => {
    server = app.listen(0);
    await new Promise((resolve) => server.once("listening", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  itAnswersEveryErrorAsAProblem({
    lines,
    async send(method, path, body) {
      const res = await fetch(`${baseUrl}${path}`, { method, headers: { ...REQUEST_HEADERS, "content-type": "application/json" }, ...(body === undefined ? {} : { body }) });
      return { status: res.status, headers: Object.fromEntries(res.headers), text: await res.text() };
    },
  });
});
