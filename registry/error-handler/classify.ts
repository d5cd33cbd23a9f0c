// Decides what a thrown value means for the client: status, code, a safe detail, issues and headers.
import { validationIssues, type ProblemIssue } from "./issues";
import { codeOfStatus, isErrorStatus, type StatusTable } from "./status-table";

/** What the client may learn about an error. `detail` is `undefined` when the message must stay in the log. */
export type Classified = {
  status: number;
  code: string;
  detail: string | undefined;
  issues?: ProblemIssue[];
  headers: Record<string, string>;
};

export type ClassifyOptions = { statuses: StatusTable };

/**
 * Headers an error may hand to its response (`err.headers`, any case), as http-errors and the rate
 * limiter do. An allowlist, because other libraries' errors carry the *request's* headers there.
 */
export const FORWARDED_ERROR_HEADERS: readonly string[] = ["retry-after", "ratelimit", "ratelimit-policy", "www-authenticate", "allow"];

type ErrorShape = {
  code?: unknown;
  message?: unknown;
  status?: unknown;
  statusCode?: unknown;
  expose?: unknown;
  type?: unknown;
  headers?: unknown;
  res?: unknown;
  retryAfterSeconds?: unknown;
};

/**
 * In order: a code in the table, a validation error, a body that failed to parse, an error carrying
 * a 4xx/5xx status, and everything else (500). Messages reach the client only below 500.
 *
 * @example
 * classifyError(Object.assign(new Error("Wait"), { code: "REQUEST_IN_PROGRESS", retryAfterSeconds: 2 }), options);
 * // { status: 409, code: "REQUEST_IN_PROGRESS", detail: "Wait", headers: { "retry-after": "2" } }
 */
export function classifyError(err: unknown, { statuses }: ClassifyOptions): Classified {
  const shape: ErrorShape = typeof err === "object" && err !== null ? err : {};
  const message = typeof shape.message === "string" ? shape.message : undefined;
  const code = typeof shape.code === "string" && Object.hasOwn(statuses, shape.code) ? shape.code : undefined;

  if (code !== undefined) {
    const status = statuses[code] ?? 500;
    return { status, code, detail: status < 500 ? message : undefined, headers: forwardedHeaders(shape) };
  }
  const issues = validationIssues(err);
  if (issues) return { status: statuses.VALIDATION_FAILED ?? 422, code: "VALIDATION_FAILED", detail: "The request is not valid; see `issues`.", issues, headers: {} };
  if (isMalformedBody(shape, message)) {
    // The parser's own message quotes the body ('Unexpected token "h", "hunter2"...'): not echoed.
    return { status: statuses.MALFORMED_REQUEST_BODY ?? 400, code: "MALFORMED_REQUEST_BODY", detail: "The request body could not be parsed.", headers: {} };
  }
  const status = isErrorStatus(shape.status) ? shape.status : isErrorStatus(shape.statusCode) ? shape.statusCode : undefined;
  if (status !== undefined) {
    // http-errors marks messages that are not for clients with `expose: false`.
    const exposed = status < 500 && shape.expose !== false;
    return { status, code: codeOfStatus(status), detail: exposed ? message : undefined, headers: status < 500 ? forwardedHeaders(shape) : {} };
  }
  return { status: 500, code: "INTERNAL_ERROR", detail: undefined, headers: {} };
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
