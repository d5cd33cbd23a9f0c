// The one table from error `code` to HTTP status, and the titles of the statuses themselves.
import { BLOCK_ERROR_STATUSES } from "./block-error-codes";

/** Which status each error code answers with. Edit it here, or extend it per app with the `statuses` option. */
export type StatusTable = Readonly<Record<string, number>>;

/** This block's own answers. Validation: 422 (RFC 9110's "well-formed but invalid"); 400 is also common. */
const OWN_STATUSES = {
  VALIDATION_FAILED: 422,
  MALFORMED_REQUEST_BODY: 400,
  NOT_FOUND: 404,
  INTERNAL_ERROR: 500,
} as const;

/**
 * The other blocks' codes, learnt by `code` alone (no import: block-error-codes.ts is a copy of the
 * file they build their errors from), with the status each answers when the error does not say.
 * Their errors carry their own `status` (the idempotency route's `statusMap` already applied), and
 * that status wins over this table.
 */
export const BLOCK_STATUSES: StatusTable = { ...BLOCK_ERROR_STATUSES.idempotency, ...BLOCK_ERROR_STATUSES.rateLimiter };

/**
 * Every code this block answers with by default. Anything thrown with a code that is not here (or
 * in your `statuses`) is unknown (500), so a driver's `ECONNREFUSED` or a PostgreSQL `23505` never
 * becomes a client-visible code.
 */
export const DEFAULT_STATUSES: StatusTable = { ...OWN_STATUSES, ...BLOCK_STATUSES };

/** RFC 9110 reason phrases: with `type: "about:blank"`, RFC 9457 wants the title to be the status's phrase. */
const TITLES: Readonly<Record<number, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  411: "Length Required",
  412: "Precondition Failed",
  413: "Content Too Large",
  414: "URI Too Long",
  415: "Unsupported Media Type",
  416: "Range Not Satisfiable",
  417: "Expectation Failed",
  421: "Misdirected Request",
  422: "Unprocessable Content",
  423: "Locked",
  424: "Failed Dependency",
  425: "Too Early",
  426: "Upgrade Required",
  428: "Precondition Required",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  451: "Unavailable For Legal Reasons",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/**
 * The status's reason phrase.
 *
 * @example
 * statusTitle(409); // "Conflict"
 * statusTitle(499); // "Client Error"
 */
export function statusTitle(status: number): string {
  return TITLES[status] ?? (status < 500 ? "Client Error" : "Server Error");
}

/**
 * The code of an error that carries a status but no code of ours: the title in upper snake case.
 *
 * @example
 * codeOfStatus(403); // "FORBIDDEN"
 * codeOfStatus(500); // "INTERNAL_ERROR"
 */
export function codeOfStatus(status: number): string {
  if (status === 500) return "INTERNAL_ERROR";
  return statusTitle(status)
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, "_");
}

/** True for a status this block may send: an integer in 400–599. */
export function isErrorStatus(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 400 && value <= 599;
}
