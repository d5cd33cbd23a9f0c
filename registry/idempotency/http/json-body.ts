// A request body declared as JSON, as the fingerprint takes it: one rule for the adapters that read bodies themselves (Hono, fetch).
import { IdempotencyError } from "../errors";

const JSON_TYPE = /[/+]json\b/i;

/** True for `application/json`, `application/problem+json; charset=utf-8` and the like. */
export function isJsonContentType(contentType: string): boolean {
  return JSON_TYPE.test(contentType);
}

/**
 * The body's text parsed, or undefined for an empty body. Malformed JSON is refused with
 * IDEMPOTENCY_PAYLOAD_INVALID (a 400): as a bare SyntaxError it would reach the app's error handling as a 500.
 *
 * @example
 * parseJsonBody('{"amount":1}'); // { amount: 1 }
 * parseJsonBody('{"amount":'); // throws IdempotencyError IDEMPOTENCY_PAYLOAD_INVALID
 */
export function parseJsonBody(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new IdempotencyError("IDEMPOTENCY_PAYLOAD_INVALID", "The request body is not valid JSON.");
  }
}
