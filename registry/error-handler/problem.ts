// Any thrown value in, an RFC 9457 problem out: status, headers and a body that is safe to send.
import { classifyError } from "./classify";
import type { ProblemIssue } from "./issues";
import { consoleLogger, logProblem, type ProblemLogger } from "./log";
import { DEFAULT_STATUSES, isErrorStatus, statusTitle, type StatusTable } from "./status-table";

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

/** The body of every error response (RFC 9457), plus `code` and `requestId`. */
export type ProblemBody = {
  type: string;
  title: string;
  status: number;
  detail: string;
  /** The request's path (no query string: it can hold tokens). */
  instance?: string;
  code: string;
  requestId: string;
  issues?: ProblemIssue[];
};

export type Problem = { status: number; headers: Record<string, string>; body: ProblemBody };

/** What the handler needs to know about the request it answers. */
export type ProblemRequest = { requestId: string; path?: string | undefined };

/** A counter of error responses by status and code, e.g. a prom-client Counter behind a one-line function. */
export type ProblemMetrics = { count: (status: number, code: string) => void };

/**
 * The options every adapter takes.
 *
 * @example
 * const options: ErrorHandlerOptions = { statuses: { CARD_DECLINED: 402, VALIDATION_FAILED: 400 }, logger };
 */
export type ErrorHandlerOptions = {
  /**
   * Your codes, added to DEFAULT_STATUSES. A code you list here wins everywhere, even over the
   * status an idempotency route's `statusMap` put on its error.
   */
  statuses?: StatusTable | undefined;
  /** @default consoleLogger (server errors as JSON on stderr) */
  logger?: ProblemLogger | undefined;
  metrics?: ProblemMetrics | undefined;
  /** The problem type URI of a code, e.g. a page of your API docs. @default "about:blank" */
  typeOf?: ((code: string) => string) | undefined;
};

/** What the 404 handlers pass in: a code in the table, and a message safe to show. */
export const ROUTE_NOT_FOUND = Object.freeze({ name: "RouteNotFound", code: "NOT_FOUND", message: "No route matches this method and path." });

// No internals below 500 either way, but a 5xx answer tells the client what it can do next.
const SERVER_ERROR_DETAIL = "The server could not complete the request. Quote the requestId if you report it.";

/**
 * Resolves the options once and returns the function every adapter calls: it classifies the
 * error, logs it with the requestId, counts it, and returns the problem to send. `hasCode`
 * says whether a code is in the table.
 *
 * @example
 * const toProblem = createProblemHandler({ logger });
 * const { status, headers, body } = toProblem(err, { requestId: "req_1", path: "/payments" });
 */
export function createProblemHandler(options: ErrorHandlerOptions = {}) {
  const classifyOptions = { statuses: { ...DEFAULT_STATUSES, ...options.statuses }, overrides: options.statuses };
  // A typo such as 4090 would otherwise surface as a throw inside the error handler, on the first such error.
  for (const [code, status] of Object.entries(classifyOptions.statuses)) {
    if (!isErrorStatus(status)) throw new TypeError(`error-handler: the status of ${code} must be an integer from 400 to 599, not ${String(status)}.`);
  }
  const logger = options.logger ?? consoleLogger;
  const typeOf = options.typeOf ?? (() => "about:blank");
  const { metrics } = options;

  const hasCode = (code: string) => Object.hasOwn(classifyOptions.statuses, code);

  return Object.assign(function toProblem(err: unknown, request: ProblemRequest): Problem {
    const { status, code, detail, issues, headers } = classifyError(err, classifyOptions);
    const body: ProblemBody = {
      type: typeOf(code),
      title: statusTitle(status),
      status,
      detail: detail ?? (status >= 500 ? SERVER_ERROR_DETAIL : statusTitle(status)),
      ...(request.path === undefined ? {} : { instance: request.path }),
      code,
      requestId: request.requestId,
      ...(issues ? { issues } : {}),
    };
    logProblem(logger, err, { requestId: request.requestId, status, code });
    metrics?.count(status, code);
    return { status, headers: { ...headers, "content-type": PROBLEM_CONTENT_TYPE }, body };
  }, { hasCode });
}

export type ToProblem = ReturnType<typeof createProblemHandler>;
