// Hono 4 adapter: handlers for app.onError and app.notFound, and a middleware that re-sends other blocks' error answers as problems.
import type { Context, ErrorHandler, MiddlewareHandler, NotFoundHandler } from "hono";
import { answeredError } from "../error-body";
import { pickRequestId } from "../request-id";
import { createProblemHandler, ROUTE_NOT_FOUND, type ErrorHandlerOptions, type ToProblem } from "../problem";
import { problemJson } from "../problem-json";

/**
 * Returns `onError` and `notFound` for the app, and `formatAnsweredErrors`: middleware that turns
 * `{ "error": { "code", "message" } }` answers of other blocks (idempotency, rate limiter) into
 * problems, when their code is in the table.
 *
 * @example
 * const problems = problemDetails({ logger });
 * app.onError(problems.onError);
 * app.notFound(problems.notFound);
 * app.use(problems.formatAnsweredErrors); // optional, before the routes
 */
export function problemDetails(options: ErrorHandlerOptions = {}): {
  onError: ErrorHandler;
  notFound: NotFoundHandler;
  formatAnsweredErrors: MiddlewareHandler;
} {
  const toProblem = createProblemHandler(options);
  return {
    onError: function problemErrorHandler(err, c) {
      return respond(c, toProblem, err);
    },
    notFound: function problemNotFound(c) {
      return respond(c, toProblem, ROUTE_NOT_FOUND);
    },
    formatAnsweredErrors: async function formatAnsweredErrors(c, next) {
      await next();
      const { status, headers } = c.res;
      if (status < 400 || !headers.get("content-type")?.startsWith("application/json")) return;
      const answered = answeredError(
        toProblem,
        status,
        headers.get("content-type") ?? undefined,
        await c.res.clone().text(),
        headers.get("retry-after") ?? undefined,
      );
      // Hono copies the old response's other headers (x-request-id, RateLimit) onto the new one.
      if (answered) c.res = respond(c, toProblem, answered);
    },
  };
}

function respond(c: Context, toProblem: ToProblem, err: unknown): Response {
  // The logger block's (and hono/request-id's) `requestId` variable, else the incoming header.
  const requestId = pickRequestId(c.get("requestId" as never), c.req.header("x-request-id"));
  const acceptLanguage = toProblem.localizes ? c.req.header("accept-language") : undefined;
  const { status, headers, body } = toProblem(err, {
    requestId,
    path: c.req.path,
    traceparent: c.req.header("traceparent"),
    acceptLanguage,
  });
  return new Response(problemJson(body), { status, headers });
}
