// NestJS 11 adapter: a global exception filter that answers every error, HttpExceptions included, with application/problem+json.
import { Catch, HttpException, type ArgumentsHost, type ExceptionFilter } from "@nestjs/common";
import { withVary } from "../localize";
import { pickRequestId } from "../request-id";
import { createProblemHandler, ROUTE_NOT_FOUND, type ErrorHandlerOptions, type ToProblem } from "../problem";
import { problemJson } from "../problem-json";

/** What the filter reads from the request of either platform (Express or Fastify). */
type PlatformRequest = {
  method: string;
  url: string;
  originalUrl?: string;
  id?: unknown;
  headers: Record<string, string | string[] | undefined>;
};

/** The response calls both platforms share (Express `Response`, Fastify `FastifyReply`). */
type PlatformResponse = {
  headersSent?: boolean;
  sent?: boolean;
  locals?: { requestId?: unknown };
  status(code: number): unknown;
  header(name: string, value: string): unknown;
  getHeader(name: string): unknown;
  send(body: Buffer): unknown;
};

/**
 * Catches everything, on both platforms. Register it globally so Nest's own 404 (no route) comes
 * here too.
 *
 * @example
 * app.useGlobalFilters(new ProblemDetailsFilter({ logger }));
 * // or as a provider: { provide: APP_FILTER, useFactory: () => new ProblemDetailsFilter({ logger }) }
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  readonly #toProblem: ToProblem;

  constructor(options: ErrorHandlerOptions = {}) {
    this.#toProblem = createProblemHandler(options);
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== "http") throw exception;
    const request = host.switchToHttp().getRequest<PlatformRequest>();
    const response = host.switchToHttp().getResponse<PlatformResponse>();
    // Half a response is already out: nothing this filter sends would reach the client intact.
    if (response.headersSent || response.sent) return;
    const url = request.originalUrl ?? request.url;
    // The logger block's `res.locals.requestId`, Fastify's or pino-http's `request.id`, then the incoming header.
    const requestId = pickRequestId(response.locals?.requestId, request.id, request.headers["x-request-id"]);
    const { traceparent, "accept-language": acceptLanguage } = request.headers;
    const { status, headers, body } = this.#toProblem(errorOf(exception, request.method, url), {
      requestId,
      path: url.split("?")[0],
      traceparent,
      acceptLanguage,
    });
    response.status(status);
    for (const [name, value] of Object.entries(withVary(headers, response.getHeader("vary"))))
      response.header(name, value);
    // Bytes: both platforms keep the content type set above as it is.
    response.send(Buffer.from(problemJson(body)));
  }
}

/** Nest's router answers an unmatched route with a 404 "Cannot GET /path?query": the query can hold a token. */
function errorOf(exception: unknown, method: string, url: string): unknown {
  const isRouterNotFound =
    exception instanceof HttpException &&
    exception.getStatus() === 404 &&
    exception.message === `Cannot ${method} ${url}`;
  return isRouterNotFound ? ROUTE_NOT_FOUND : exception;
}
