// Reads the Idempotency-Key header: a bare token or an RFC 8941 quoted string of visible ASCII.
import { IdempotencyError } from "../errors";
import { isIdempotencyKey } from "../scope";

/** A header as frameworks hand it over: absent, one value, or (Node, for some names) an array. */
export type HeaderValue = string | readonly string[] | null | undefined;

export const IDEMPOTENCY_KEY_HEADER = "idempotency-key";

const OPTIONAL_WHITESPACE = /^[ \t]+|[ \t]+$/g;
// RFC 8941 sf-string: printable ASCII between quotes, where only `\"` and `\\` are escapes.
const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;

/**
 * The key, or `undefined` when the request has no Idempotency-Key header. Throws
 * `IDEMPOTENCY_KEY_INVALID` for anything else that is not 1-255 visible ASCII characters,
 * including a repeated header: proxies and Node join repeats with ", ", and guessing which one
 * the client meant could pair one request with another request's result.
 *
 * @example
 * parseIdempotencyKey('"8e03978e-40d5"'); // "8e03978e-40d5"
 * parseIdempotencyKey("8e03978e-40d5"); // "8e03978e-40d5"
 * parseIdempotencyKey(undefined); // undefined
 * parseIdempotencyKey("a, b"); // throws IDEMPOTENCY_KEY_INVALID
 */
export function parseIdempotencyKey(header: HeaderValue): string | undefined {
  if (header === null || header === undefined) return undefined;
  if (typeof header !== "string") {
    if (header.length !== 1) throw invalidKey();
    return parseIdempotencyKey(header[0]);
  }
  const value = header.replace(OPTIONAL_WHITESPACE, "");
  const quoted = SF_STRING.exec(value);
  const key = quoted ? (quoted[1] ?? "").replace(/\\(["\\])/g, "$1") : value;
  // A comma outside quotes can only come from joined repeats; `"` outside quotes is malformed.
  if (!quoted && /[,"]/.test(key)) throw invalidKey();
  if (!isIdempotencyKey(key)) throw invalidKey();
  return key;
}

function invalidKey(): IdempotencyError {
  return new IdempotencyError(
    "IDEMPOTENCY_KEY_INVALID",
    'The Idempotency-Key header must be one key of 1 to 255 visible ASCII characters, bare or as a quoted string ("...").',
  );
}
