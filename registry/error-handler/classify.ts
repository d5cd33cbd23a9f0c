// Decides what a thrown value means for the client: status, code, a safe detail, issues and headers.
import { declaredStatus } from "./declared";
import { isProblemError, type ProblemExtensions, type ResolvedProblem } from "./define-problem";
import { isDownstreamError } from "./downstream";
import { fromHttpException } from "./http-exception";
import type { ProblemIssue } from "./issues";
import { requestIssues } from "./request-validation";
import { BLOCK_STATUSES, codeOfStatus, isErrorStatus, type StatusTable } from "./status-table";

/** What the client may learn about an error. `detail` is `undefined` when the message must stay in the log. */
export type Classified = {
  status: number;
  code: string;
  detail: string | undefined;
  issues?: ProblemIssue[];
  headers: Record<string, string>;
  /** A defined problem's title and type, and the extension members of its occurrence. */
  definition?: ResolvedProblem;
  extensions?: ProblemExtensions;
};

export type ClassifyOptions = {
  /** Every code this app answers with: the defaults and yours. */
  statuses: StatusTable;
  /** Your own `statuses`: they win even over the status a block's error carries. @default {} */
  overrides?: StatusTable | undefined;
};

/**
 * Headers an error may hand to its response (`err.headers`, any case), as http-errors and the rate
 * limiter do. An allowlist, because other libraries' errors carry the *request's* headers there.
 */
export const FORWARDED_ERROR_HEADERS: readonly string[] = [
  "retry-after",
  "ratelimit",
  "ratelimit-policy",
  "www-authenticate",
  "allow",
];

type ErrorShape = {
  code?: unknown;
  message?: unknown;
  status?: unknown;
  type?: unknown;
  headers?: unknown;
  res?: unknown;
  retryAfterSeconds?: unknown;
};

const INTERNAL: Classified = { status: 500, code: "INTERNAL_ERROR", detail: undefined, headers: {} };

/**
 * A status and a message reach the client only from an error that declares itself an answer for
 * it. In order: a defined problem; a downstream's error (an HTTP client's, a driver's) is a 500
 * whatever it carries; a request validation error; a body that failed to parse; a code in the
 * table; an error that declares its status (http-errors, NestJS and Hono exceptions, Fastify's
 * own); everything else is a 500. Messages reach the client only below 500.
 *
 * @example
 * classifyError(Object.assign(new Error("Wait"), { code: "REQUEST_IN_PROGRESS", retryAfterSeconds: 2 }), options);
 * // { status: 409, code: "REQUEST_IN_PROGRESS", detail: "Wait", headers: { "retry-after": "2" } }
 * classifyError(axiosError401, options); // { status: 500, code: "INTERNAL_ERROR", detail: undefined, headers: {} }
 */
export function classifyError(thrown: unknown, { statuses, overrides = {} }: ClassifyOptions): Classified {
  const err = fromHttpException(thrown);
  // Your own definition first: its code may look like a driver's ("E4001" is shaped like a SQLSTATE).
  if (isProblemError(err)) {
    const { code, status: own, title, type, extensions, message } = err;
    const status = overrides[code] ?? own;
    return {
      status,
      code,
      detail: status < 500 ? message : undefined,
      headers: forwardedHeaders(err),
      definition: { code, status, title, type },
      extensions,
    };
  }
  if (isDownstreamError(err)) return INTERNAL;
  const issues = requestIssues(err);
  if (issues)
    return {
      status: statuses.VALIDATION_FAILED ?? 422,
      code: "VALIDATION_FAILED",
      detail: "The request is not valid; see `issues`.",
      issues,
      headers: {},
    };

  const shape: ErrorShape = typeof err === "object" && err !== null ? err : {};
  const message = typeof shape.message === "string" ? shape.message : undefined;
  if (isMalformedBody(shape, message)) {
    // The parser's own message quotes the body ('Unexpected token "h", "hunter2"...'): not echoed.
    return {
      status: statuses.MALFORMED_REQUEST_BODY ?? 400,
      code: "MALFORMED_REQUEST_BODY",
      detail: "The request body could not be parsed.",
      headers: {},
    };
  }
  const code = typeof shape.code === "string" && Object.hasOwn(statuses, shape.code) ? shape.code : undefined;
  if (code !== undefined) {
    // The idempotency block's errors carry the route's statusMap already applied: the table only fills in.
    const carried = Object.hasOwn(BLOCK_STATUSES, code) && isErrorStatus(shape.status) ? shape.status : undefined;
    const status = overrides[code] ?? carried ?? statuses[code] ?? 500;
    return { status, code, detail: status < 500 ? message : undefined, headers: forwardedHeaders(shape) };
  }
  const declared = declaredStatus(err);
  if (declared) {
    const { status, exposeMessage } = declared;
    return {
      status,
      code: codeOfStatus(status),
      detail: exposeMessage ? message : undefined,
      headers: status < 500 ? forwardedHeaders(shape) : {},
    };
  }
  return INTERNAL;
}

/** Express's body-parser, Fastify's content-type parser, Hono's validator and co-body (@koa/bodyparser), as each reports a bad body. */
function isMalformedBody(shape: ErrorShape, message: string | undefined): boolean {
  return (
    shape.type === "entity.parse.failed" ||
    shape.code === "FST_ERR_CTP_INVALID_JSON_BODY" ||
    shape.code === "FST_ERR_CTP_EMPTY_JSON_BODY" ||
    (shape.status === 400 && message === "Malformed JSON in request body") ||
    (shape.status === 400 && shape instanceof SyntaxError)
  );
}

function forwardedHeaders(shape: ErrorShape): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of headerEntries(shape)) {
    const lower = name.toLowerCase();
    const text = typeof value === "string" || typeof value === "number" ? String(value) : undefined;
    // A line break in a header value would throw while the error response is being written.
    if (FORWARDED_ERROR_HEADERS.includes(lower) && text !== undefined && !/[\r\n]/.test(text)) headers[lower] = text;
  }
  // The idempotency block says how long to wait in `retryAfterSeconds` rather than in a header.
  const seconds = shape.retryAfterSeconds;
  if (headers["retry-after"] === undefined && typeof seconds === "number" && Number.isFinite(seconds)) {
    headers["retry-after"] = String(Math.max(0, Math.ceil(seconds)));
  }
  return headers;
}

/** `err.headers` as a plain object, or the headers of the Response a Hono HTTPException carries (basic auth's WWW-Authenticate). */
function headerEntries(shape: ErrorShape): [string, unknown][] {
  const res = shape.res as { headers?: unknown } | undefined;
  const source = shape.headers ?? res?.headers;
  if (source instanceof Headers) return [...source];
  return typeof source === "object" && source !== null ? Object.entries(source) : [];
}
