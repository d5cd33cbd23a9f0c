// Any thrown value in, an RFC 9457 problem out: status, headers and a body that is safe to send.
import { classifyError } from "./classify";
import type { ProblemDefinition } from "./define-problem";
import type { ProblemIssue } from "./issues";
import type { Localize, LocalizedText } from "./localize";
import { logProblem } from "./log";
import { consoleLogger, type BlockLogger as ProblemLogger } from "./logger";
import { DEFAULT_STATUSES, isErrorStatus, statusTitle, type StatusTable } from "./status-table";
import { traceIdOf } from "./trace-id";

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

/** The body of every error response (RFC 9457), plus `code` and `requestId`, and a defined problem's extension members. */
export type ProblemBody = {
  type: string;
  title: string;
  status: number;
  detail: string;
  /** The request's path (no query string: it can hold tokens). */
  instance?: string;
  code: string;
  requestId: string;
  /** The W3C trace id (the active OpenTelemetry span's, else the request's `traceparent`), when there is one. */
  traceId?: string;
  issues?: ProblemIssue[];
} & Record<string, unknown>;

export type Problem = { status: number; headers: Record<string, string>; body: ProblemBody };

/** A header as the frameworks hand it over: Node's may be an array, fetch's `get` may be null. */
type HeaderValue = string | string[] | null | undefined;

/** What the handler needs to know about the request it answers. */
export type ProblemRequest = {
  requestId: string;
  path?: string | undefined;
  /** The request's `traceparent` header. */
  traceparent?: HeaderValue;
  /** The request's `Accept-Language` header, for `localize`. */
  acceptLanguage?: HeaderValue;
};

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
  /** @default consoleLogger (server errors as JSON lines on stderr) */
  logger?: ProblemLogger | undefined;
  metrics?: ProblemMetrics | undefined;
  /** Your problem definitions (`defineProblem`): their codes, statuses, titles and types. */
  problems?: readonly ProblemDefinition[] | undefined;
  /** The problem type URI of a code without a definition, e.g. a page of your API docs. @default "about:blank" */
  typeOf?: ((code: string) => string) | undefined;
  /** Translates a problem's title and detail for the request's Accept-Language, e.g. `localizeFrom(catalog)`. */
  localize?: Localize | undefined;
};

/** What the 404 handlers pass in: a code in the table, and a message safe to show. */
export const ROUTE_NOT_FOUND = Object.freeze({
  name: "RouteNotFound",
  code: "NOT_FOUND",
  message: "No route matches this method and path.",
});

// No internals below 500 either way, but a 5xx answer tells the client what it can do next.
const SERVER_ERROR_DETAIL = "The server could not complete the request. Quote the requestId if you report it.";

/**
 * Resolves the options once and returns the function every adapter calls: it classifies the
 * error, logs it with the requestId, counts it, and returns the problem to send. `hasCode`
 * says whether a code is in the table; `localizes`, whether `acceptLanguage` is read at all (an
 * adapter can skip looking the header up).
 *
 * @example
 * const toProblem = createProblemHandler({ logger });
 * const { status, headers, body } = toProblem(err, { requestId: "req_1", path: "/payments" });
 */
export function createProblemHandler(options: ErrorHandlerOptions = {}) {
  const definitions = new Map((options.problems ?? []).map((problem) => [problem.code, problem]));
  const defined = Object.fromEntries([...definitions.values()].map(({ code, status }) => [code, status]));
  const classifyOptions = {
    statuses: { ...DEFAULT_STATUSES, ...defined, ...options.statuses },
    overrides: options.statuses,
  };
  // A typo such as 4090 would otherwise surface as a throw inside the error handler, on the first such error.
  for (const [code, status] of Object.entries(classifyOptions.statuses)) {
    if (!isErrorStatus(status))
      throw new TypeError(
        `error-handler: the status of ${code} must be an integer from 400 to 599, not ${String(status)}.`,
      );
  }
  const logger = options.logger ?? consoleLogger;
  const typeOf = options.typeOf ?? (() => "about:blank");
  const { metrics, localize } = options;

  const hasCode = (code: string) => Object.hasOwn(classifyOptions.statuses, code);

  return Object.assign(
    function toProblem(err: unknown, request: ProblemRequest): Problem {
      const { status, code, detail, issues, headers, definition, extensions } = classifyError(err, classifyOptions);
      const known = definition ?? definitions.get(code);
      const traceId = traceIdOf(single(request.traceparent));
      // Members set one by one, in the order clients read them: no throwaway objects for the optional ones.
      const body: ProblemBody = {
        ...extensions,
        type: known?.type ?? typeOf(code),
        title: known?.title ?? statusTitle(status),
        status,
        detail: detail ?? (status >= 500 ? SERVER_ERROR_DETAIL : (known?.title ?? statusTitle(status))),
      } as ProblemBody;
      if (request.path !== undefined) body.instance = request.path;
      body.code = code;
      body.requestId = request.requestId;
      if (traceId !== undefined) body.traceId = traceId;
      if (issues) body.issues = issues;
      logProblem(logger, err, request.requestId, status, code, traceId);
      metrics?.count(status, code);
      const answer = { ...headers, "content-type": PROBLEM_CONTENT_TYPE };
      return {
        status,
        headers: localize ? localized(localize, body, single(request.acceptLanguage), answer) : answer,
        body,
      };
    },
    { hasCode, localizes: localize !== undefined },
  );
}

/** Applies `localize` to the body in place; a translation that throws leaves the problem as it was. */
function localized(
  localize: Localize,
  body: ProblemBody,
  acceptLanguage: string | undefined,
  headers: Record<string, string>,
): Record<string, string> {
  // The answer depends on Accept-Language: caches must key on it.
  const varied = { ...headers, vary: "Accept-Language" };
  let text: LocalizedText | undefined;
  try {
    text = localize(body, acceptLanguage);
  } catch {
    return varied;
  }
  if (text?.title !== undefined) body.title = text.title;
  if (text?.detail !== undefined) body.detail = text.detail;
  return text?.language === undefined ? varied : { ...varied, "content-language": text.language };
}

function single(value: HeaderValue): string | undefined {
  return Array.isArray(value) ? value.join(", ") : (value ?? undefined);
}

export type ToProblem = ReturnType<typeof createProblemHandler>;
