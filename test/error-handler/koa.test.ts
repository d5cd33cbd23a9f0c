// Koa over a real listener: every kind of error answered as problem+json, with and without a request id middleware.
import Router from "@koa/router";
import Koa, { type Middleware } from "koa";
import { describe } from "vitest";
import { problemDetails } from "@/blocks/error-handler/adapters/koa";
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

/** What co-body (under @koa/bodyparser) throws for a bad body: JSON.parse's SyntaxError, status 400. */
const readJson: Middleware = async (ctx, next) => {
  let text = "";
  for await (const chunk of ctx.req) text += String(chunk);
  try {
    (ctx.request as { body?: unknown }).body = JSON.parse(text);
  } catch (err) {
    throw Object.assign(err as SyntaxError, { status: 400, body: text });
  }
  await next();
};

/** A request id middleware: the id on `ctx.state.requestId`, echoed to the client. */
const requestId: Middleware = async (ctx, next) => {
  ctx.state.requestId = crypto.randomUUID();
  ctx.set("x-request-id", ctx.state.requestId as string);
  await next();
};

describe.each([
  ["with a request id on ctx.state", true],
  ["without a request id middleware", false],
])("koa %s", (_name, withRequestId) => {
  const { logger, lines } = captureLogs();
  const app = new Koa();
  if (withRequestId) app.use(requestId);
  app.use(problemDetails({ logger, ...SUITE_OPTIONS }));
  const router = new Router();
  router.post("/in-progress", () => {
    throw new IdempotencyError("REQUEST_IN_PROGRESS", "A request with this key is still running.", 2);
  });
  router.post("/limited", () => {
    throw rateLimitError();
  });
  router.post("/validated", () => {
    throw validationError();
  });
  router.post("/parsed", readJson, (ctx) => {
    ctx.body = (ctx.request as { body?: unknown }).body;
  });
  router.post("/unknown", async () => {
    throw unknownError();
  });
  router.post("/declined", () => {
    throw declinedError();
  });
  router.post("/downstream", async () => {
    throw downstreamError();
  });
  app.use(router.routes());

  const baseUrl = serveDuringSuite(() => app.listen(0, "127.0.0.1"));

  itAnswersEveryErrorAsAProblem({ lines, send: sendTo(baseUrl) });
});
