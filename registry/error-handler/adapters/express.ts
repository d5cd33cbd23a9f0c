// Express 5 adapter: an error middleware and a 404 handler that answer with application/problem+json.
import type { ErrorRequestHandler, Request, RequestHandler, Response } from "express";
import { withVary } from "../localize";
import { pickRequestId } from "../request-id";
import { createProblemHandler, ROUTE_NOT_FOUND, type ErrorHandlerOptions, type Problem } from "../problem";
import { problemJson } from "../problem-json";

/**
 * Returns `notFound` and `onError`; mount both after every route, in that order.
 *
 * @example
 * const problems = problemDetails({ logger });
 * app.use(problems.notFound);
 * app.use(problems.onError);
 */
export function problemDetails(options: ErrorHandlerOptions = {}): {
  notFound: RequestHandler;
  onError: ErrorRequestHandler;
} {
  const toProblem = createProblemHandler(options);
  return {
    notFound: function problemNotFound(req, res) {
      send(res, toProblem(ROUTE_NOT_FOUND, requestOf(req, res)));
    },
    onError: function problemErrorHandler(err: unknown, req, res, next) {
      // Half a response is already out: only Express's own handler can end it (it closes the socket).
      if (res.headersSent) return next(err);
      send(res, toProblem(err, requestOf(req, res)));
    },
  };
}

/** The logger block's `res.locals.requestId`, pino-http's `req.id`, then the incoming header. */
function requestOf(req: Request, res: Response) {
  const requestId = pickRequestId(res.locals.requestId, (req as { id?: unknown }).id, req.headers["x-request-id"]);
  return {
    requestId,
    path: req.originalUrl.split("?")[0],
    traceparent: req.headers.traceparent,
    acceptLanguage: req.headers["accept-language"],
  };
}

function send(res: Response, { status, headers, body }: Problem): void {
  // `end` rather than `json`: `json` would replace the problem+json content type.
  res
    .status(status)
    .set(withVary(headers, res.get("vary")))
    .end(problemJson(body));
}
