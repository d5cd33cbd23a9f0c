// What of an error is safe to log: one rule for every block (the idempotency, rate-limiter, outbox and error-handler blocks vendor identical copies).
import { redactUrlCredentials } from "./redact-url";

export type ErrorSummary = { name: string; message: string; code?: string | number };

/**
 * Enough to recognise an error, nothing it happens to carry: `name`, `message` and a string or
 * numeric `code`, never the whole object (an HTTP client's error holds the request's headers, bearer
 * token included; a driver's, its connection config). A URL's credentials in the message are masked.
 *
 * @example
 * errorSummary(axiosError); // { name: "AxiosError", message: "Request failed with status code 502", code: "ERR_BAD_RESPONSE" }
 * errorSummary(new Error("connect ECONNREFUSED postgres://admin:hunter2@db/prod")); // message: "connect ECONNREFUSED postgres://[Redacted]@db/prod"
 */
export function errorSummary(err: unknown): ErrorSummary {
  if (typeof err !== "object" || err === null) return { name: typeof err, message: redactUrlCredentials(String(err)) };
  const { name, message, code } = err as { name?: unknown; message?: unknown; code?: unknown };
  // `class CardDeclined extends Error {}` inherits the name "Error": its class says more.
  const className = (err as { constructor?: { name?: unknown } }).constructor?.name;
  const ownClass = typeof className === "string" && className !== "Object" ? className : undefined;
  const summary: ErrorSummary = {
    name: typeof name === "string" && !(name === "Error" && ownClass) ? name : (ownClass ?? "Object"),
    message: typeof message === "string" ? redactUrlCredentials(message) : "",
  };
  if (typeof code === "string" || typeof code === "number") summary.code = code;
  return summary;
}

/**
 * The error's stack with any URL's credentials masked, for a debug line; undefined without one.
 *
 * @example
 * logger.debug?.({ stack: errorStack(err) }, "request failed: stack");
 */
export function errorStack(err: unknown): string | undefined {
  const stack = typeof err === "object" && err !== null ? (err as { stack?: unknown }).stack : undefined;
  return typeof stack === "string" ? redactUrlCredentials(stack) : undefined;
}
