// Fetch-standard adapter (Next.js route handlers, Bun, Deno, Workers): an error in, a problem+json Response out.
import { pickRequestId } from "../request-id";
import { createProblemHandler, type ErrorHandlerOptions } from "../problem";

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
    const id = pickRequestId(requestId, request.headers.get("x-request-id"));
    const { status, headers, body } = toProblem(err, { requestId: id, path: new URL(request.url).pathname });
    return new Response(JSON.stringify(body), { status, headers });
  };
}

/**
 * With the default options: server errors go to stderr as JSON lines.
 *
 * @example
 * catch (err) { return toProblemResponse(err, request); }
 */
export const toProblemResponse = createProblemResponse();
