// Fastify 5 plugin: setErrorHandler and setNotFoundHandler answer with application/problem+json.
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from "fastify";
import { answeredError } from "../error-body";
import { withVary } from "../localize";
import { pickRequestId } from "../request-id";
import { createProblemHandler, ROUTE_NOT_FOUND, type ErrorHandlerOptions, type ToProblem } from "../problem";
import { problemJson } from "../problem-json";

export type ProblemDetailsPluginOptions = ErrorHandlerOptions & {
  /**
   * Also re-send `{ "error": { "code", "message" } }` answers of other blocks (idempotency, rate
   * limiter) as problems, when their code is in the table. @default false
   */
  formatAnsweredErrors?: boolean | undefined;
};

/**
 * Registered without encapsulation, so it answers for the whole instance. Register it before
 * your routes: a child context with its own `setErrorHandler` keeps that one.
 *
 * @example
 * await app.register(problemDetailsPlugin, { logger: app.log });
 */
export const problemDetailsPlugin: FastifyPluginCallback<ProblemDetailsPluginOptions> = Object.assign(
  function problemDetailsPlugin(
    app: FastifyInstance,
    { formatAnsweredErrors, ...options }: ProblemDetailsPluginOptions,
    done: (err?: Error) => void,
  ) {
    const toProblem = createProblemHandler(options);
    app.setErrorHandler(function problemErrorHandler(err, request, reply) {
      return send(reply, toProblem, err, request);
    });
    app.setNotFoundHandler(function problemNotFound(request, reply) {
      return send(reply, toProblem, ROUTE_NOT_FOUND, request);
    });
    if (formatAnsweredErrors) {
      app.addHook("onSend", function formatAnsweredError(request, reply, payload, next) {
        const body =
          typeof payload === "string" ? payload : Buffer.isBuffer(payload) ? payload.toString("utf8") : undefined;
        const contentType = reply.getHeader("content-type");
        const retryAfter = reply.getHeader("retry-after");
        const answered =
          body === undefined
            ? undefined
            : answeredError(
                toProblem,
                reply.statusCode,
                String(contentType ?? ""),
                body,
                retryAfter === undefined ? undefined : String(retryAfter),
              );
        if (!answered) return next(null, payload);
        const problem = toProblem(answered, requestOf(request, reply));
        reply.code(problem.status).headers(withVary(problem.headers, reply.getHeader("vary")));
        next(null, Buffer.from(problemJson(problem.body)));
      });
    }
    done();
  },
  // What fastify-plugin would set: the handlers apply to the instance it is registered on, without the dependency.
  { [Symbol.for("skip-override")]: true, [Symbol.for("fastify.display-name")]: "problem-details" },
);

function send(reply: FastifyReply, toProblem: ToProblem, err: unknown, request: FastifyRequest): FastifyReply {
  const { status, headers, body } = toProblem(err, requestOf(request, reply));
  // Bytes, so Fastify sends the content type as it is instead of adding a charset to it.
  return reply
    .code(status)
    .headers(withVary(headers, reply.getHeader("vary")))
    .send(Buffer.from(problemJson(body)));
}

/** The id the logger block echoed on the reply, else Fastify's own (`genReqId`, what its logger prints as reqId). */
function requestOf(request: FastifyRequest, reply: FastifyReply) {
  const { traceparent, "accept-language": acceptLanguage } = request.headers;
  return {
    requestId: pickRequestId(reply.getHeader("x-request-id"), request.id),
    path: request.url.split("?")[0],
    traceparent,
    acceptLanguage,
  };
}
