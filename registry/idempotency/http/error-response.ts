// Turns an IdempotencyError into its HTTP response: status, `{ error: { code, message } }` and Retry-After.
import { idempotencyErrorStatus, type IdempotencyError, type IdempotencyStatusMap } from "../errors";
import type { HttpHeaders, HttpResponse } from "./http-response";

/**
 * The response for an idempotency decision, with the route's `statusMap` applied; `details` join
 * `code` and `message` (REQUEST_FAILED names the failed response's `originalStatus`).
 *
 * @example
 * idempotencyErrorResponse(err, { REQUEST_IN_PROGRESS: 425 });
 * // { status: 425, headers: { "content-type": "application/json; charset=utf-8", "retry-after": "1" }, body: <Buffer> }
 */
export function idempotencyErrorResponse(err: IdempotencyError, statusMap: IdempotencyStatusMap = {}, details: Record<string, unknown> = {}): HttpResponse {
  const headers: HttpHeaders = { "content-type": "application/json; charset=utf-8" };
  // Retry-After is whole seconds (RFC 9110); the handler sets it when waiting can help.
  if (err.retryAfterSeconds !== undefined) headers["retry-after"] = String(Math.max(0, Math.ceil(err.retryAfterSeconds)));
  const body = { error: { ...err.toJSON().error, ...details } };
  return { status: idempotencyErrorStatus(err, statusMap), headers, body: Buffer.from(JSON.stringify(body), "utf8") };
}
