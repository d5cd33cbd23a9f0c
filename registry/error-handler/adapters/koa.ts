// Koa 3 adapter: one middleware, mounted first, that answers errors and unmatched routes with application/problem+json.
import type { Context, Middleware } from "koa";
import { answeredError } from "../error-body";
import { withVary } from "../localize";
import { pickRequestId } from "../request-id";
import { createProblemHandler, ROUTE_NOT_FOUND, type ErrorHandlerOptions, type ToProblem } from "../problem";
import { problemJson } from "../problem-json";

export type KoaProblemDetailsOptions = ErrorHandlerOptions & {
  /**
   * Also re-send `{ "error": { "code", "message" } }` answers of other blocks (idempotency, rate
   * limiter) as problems, when their code is in the table. @default false
   */
  formatAnsweredErrors?: boolean | undefined;
};

/**
 * Mount it before everything else: it sees what every later middleware throws, and a request no
 * route answered (Koa's 404 with no body).
 *
 * @example
 * app.use(problemDetails({ logger, formatAnsweredErrors: true }));
 * app.use(router.routes());
 */
export function problemDetails(options: KoaProblemDetailsOptions = {}): Middleware {
  const { formatAnsweredErrors, ...handlerOptions } = options;
  const toProblem = createProblemHandler(handlerOptions);
  return async function problemDetailsMiddleware(ctx, next) {
    try {
      await next();
    } catch (err) {
      // Half a response is already out: only Koa's own handler can end it (it closes the socket).
      if (ctx.headerSent) throw err;
      return send(ctx, toProblem, err);
    }
    if (ctx.status === 404 && ctx.body == null) return send(ctx, toProblem, ROUTE_NOT_FOUND);
    // Only an error answer can be one of theirs: a success's body is never serialized here.
    if (formatAnsweredErrors && ctx.status >= 400) {
      const answered = answeredError(
        toProblem,
        ctx.status,
        ctx.response.get("content-type"),
        bodyText(ctx.body),
        ctx.response.get("retry-after") || undefined,
      );
      if (answered) send(ctx, toProblem, answered);
    }
  };
}

/** The body as the client would get it: Koa sends an object as JSON. */
function bodyText(body: unknown): string {
  if (typeof body === "string") return body;
  if (body instanceof Uint8Array) return Buffer.from(body).toString("utf8");
  return typeof body === "object" && body !== null && !("pipe" in body) ? JSON.stringify(body) : "";
}

function send(ctx: Context, toProblem: ToProblem, err: unknown): void {
  // A `requestId` your middleware put on `ctx.state`, else the incoming header.
  const requestId = pickRequestId((ctx.state as { requestId?: unknown }).requestId, ctx.get("x-request-id"));
  const { status, headers, body } = toProblem(err, {
    requestId,
    path: ctx.path,
    traceparent: ctx.get("traceparent"),
    acceptLanguage: ctx.get("accept-language"),
  });
  ctx.status = status;
  ctx.set(withVary(headers, ctx.response.get("vary")));
  // A string, so Koa keeps the problem+json content type set above.
  ctx.body = problemJson(body);
}
