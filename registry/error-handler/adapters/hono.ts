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
  const requestId = pickRequestId(c.get("requestId" as never), headerOf(c, "x-request-id"));
  const acceptLanguage = toProblem.localizes ? headerOf(c, "accept-language") : undefined;
  const { status, headers, body } = toProblem(err, {
    requestId,
    path: c.req.path,
    traceparent: headerOf(c, "traceparent"),
    acceptLanguage,
  });
  return new Response(problemJson(body), { status, headers });
}

type NodeIncoming = { headers?: unknown; rawHeaders?: unknown };

/**
 * A request header. Under @hono/node-server, `c.env.incoming` is Node's IncomingMessage, whose
 * headers Node has parsed into a plain object already (names in lower case, values trimmed, a
 * repeated header joined with ", " as fetch's Headers joins it): read there, without the lookup
 * (name check, lower-casing) each `c.req.header` call makes. On other runtimes, `c.req.header`.
 */
function headerOf(c: Context, name: string): string | undefined {
  const incoming = (c.env as { incoming?: NodeIncoming } | undefined)?.incoming;
  if (!Array.isArray(incoming?.rawHeaders) || typeof incoming.headers !== "object" || incoming.headers === null)
    return c.req.header(name);
  const value = (incoming.headers as Record<string, unknown>)[name];
  return typeof value === "string" ? value : undefined;
}
