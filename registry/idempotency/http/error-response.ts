// Turns an IdempotencyError into its HTTP response (status, `{ error: { code, message } }`, Retry-After), or into the error a framework's error handler answers.
import { IdempotencyError, idempotencyErrorStatus, type IdempotencyStatusMap } from "../errors";
import type { HttpHeaders, HttpResponse } from "./http-response";

/**
 * The response for an idempotency decision, with the route's `statusMap` applied; `details` join
 * `code` and `message` (REQUEST_FAILED names the failed response's `originalStatus`).
 *
 * @example
 * idempotencyErrorResponse(err, { REQUEST_IN_PROGRESS: 425 });
 * // { status: 425, headers: { "content-type": "application/json; charset=utf-8", "retry-after": "1" }, body: <Buffer> }
 */
export function idempotencyErrorResponse(
  err: IdempotencyError,
  statusMap: IdempotencyStatusMap = {},
  details: Record<string, unknown> = {},
): HttpResponse {
  const headers: HttpHeaders = { "content-type": "application/json; charset=utf-8" };
  // Retry-After is whole seconds (RFC 9110); the handler sets it when waiting can help.
  if (err.retryAfterSeconds !== undefined)
    headers["retry-after"] = String(Math.max(0, Math.ceil(err.retryAfterSeconds)));
  const body = { error: { ...err.toJSON().error, ...details } };
  return { status: idempotencyErrorStatus(err, statusMap), headers, body: Buffer.from(JSON.stringify(body), "utf8") };
}

/**
 * The error handed to the framework's error handling (route option `errors: "throw"`): the same
 * error, or a copy whose `status` has the route's `statusMap` applied. `retryAfterSeconds` stays on it.
 *
 * @example
 * routeError(err, { REQUEST_IN_PROGRESS: 425 }).status; // 425
 */
export function routeError(err: IdempotencyError, statusMap: IdempotencyStatusMap): IdempotencyError {
  const status = idempotencyErrorStatus(err, statusMap);
  if (status === err.status) return err;
  return new IdempotencyError(err.code, err.message, {
    cause: err.cause,
    retryAfterSeconds: err.retryAfterSeconds,
    response: err.response,
    status,
  });
}
