// Fetch-standard adapter (Next.js route handlers, Bun, Deno, Workers): an error in, a problem+json Response out.
import { answeredError } from "../error-body";
import { pickRequestId } from "../request-id";
import { createProblemHandler, type ErrorHandlerOptions, type ToProblem } from "../problem";
import { problemJson } from "../problem-json";

/** A fetch-standard handler: Next.js route handlers pass a context, Bun and Deno other arguments. */
export type FetchHandler<A extends unknown[]> = (request: Request, ...rest: A) => Response | Promise<Response>;

/**
 * Resolves the options once; the returned function answers one error. The requestId is the one
 * you pass, else a safe incoming `x-request-id`, else a new UUID.
 *
 * @example
 * const toProblemResponse = createProblemResponse({ logger });
 * export async function POST(request: Request) {
 *   try {
 *     return Response.json(await createPayment(await request.json()), { status: 201 });
 *   } catch (err) {
 *     return toProblemResponse(err, request);
 *   }
 * }
 */
export function createProblemResponse(options: ErrorHandlerOptions = {}) {
  const toProblem = createProblemHandler(options);
  return function toProblemResponse(err: unknown, request: Request, requestId?: string): Response {
    return problemResponse(toProblem, err, request, requestId);
  };
}

/**
 * Wraps a whole handler: what it throws goes out as a problem, and the `{ "error": { "code",
 * "message" } }` answers of the idempotency and rate-limiter wrappers inside it are rewritten as
 * problems too (their other headers, such as Retry-After and RateLimit, are kept).
 *
 * @example
 * const problems = withProblems({ logger });
 * export const POST = problems(withIdempotency(handler, { getUserId }, createPayment));
 */
export function withProblems(options: ErrorHandlerOptions = {}) {
  const toProblem = createProblemHandler(options);
  return function problems<A extends unknown[]>(handler: FetchHandler<A>): FetchHandler<A> {
    return async function handleWithProblems(request, ...rest) {
      let response: Response;
      try {
        response = await handler(request, ...rest);
      } catch (err) {
        return problemResponse(toProblem, err, request);
      }
      const { status, headers } = response;
      if (status < 400 || !headers.get("content-type")?.startsWith("application/json")) return response;
      const answered = answeredError(
        toProblem,
        status,
        headers.get("content-type") ?? undefined,
        await response.clone().text(),
        headers.get("retry-after") ?? undefined,
      );
      if (!answered) return response;
      const problem = problemResponse(toProblem, answered, request);
      for (const [name, value] of headers)
        if (!problem.headers.has(name) && name !== "content-length") problem.headers.set(name, value);
      return problem;
    };
  };
}

function problemResponse(toProblem: ToProblem, err: unknown, request: Request, requestId?: string): Response {
  const id = pickRequestId(requestId, request.headers.get("x-request-id"));
  const { status, headers, body } = toProblem(err, {
    requestId: id,
    path: new URL(request.url).pathname,
    traceparent: request.headers.get("traceparent"),
    acceptLanguage: toProblem.localizes ? request.headers.get("accept-language") : undefined,
  });
  return new Response(problemJson(body), { status, headers });
}

/**
 * With the default options: server errors go to stderr as JSON lines.
 *
 * @example
 * catch (err) { return toProblemResponse(err, request); }
 */
export const toProblemResponse = createProblemResponse();
