// The Idempotency-Key header as the idempotency block reads it (the same rule, copied: blocks never import each other).

// RFC 8941 sf-string: printable ASCII between quotes, where only `\"` and `\\` are escapes.
const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;
const OPTIONAL_WHITESPACE = /^[ \t]+|[ \t]+$/g;
const VISIBLE_ASCII_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * The key the idempotency block would use for this header, so `K` and `"K"` (one key there) share
 * one quota here; `undefined` without a header; `null` for a header the idempotency block refuses
 * with 400 (repeated, malformed, too long). The limiter counts all refused headers of one caller
 * under one key, so varying the garbage buys no new quota.
 *
 * @example
 * idempotencyKeyOf('"8e03978e-40d5"'); // "8e03978e-40d5"
 * idempotencyKeyOf("8e03978e-40d5"); // "8e03978e-40d5"
 * idempotencyKeyOf("a, b"); // null
 */
export function idempotencyKeyOf(header: string | undefined): string | null | undefined {
  if (header === undefined) return undefined;
  const value = header.replace(OPTIONAL_WHITESPACE, "");
  const quoted = SF_STRING.exec(value);
  const key = quoted ? (quoted[1] ?? "").replace(/\\(["\\])/g, "$1") : value;
  // A comma outside quotes can only come from joined repeats; `"` outside quotes is malformed.
  if (!quoted && /[,"]/.test(key)) return null;
  return VISIBLE_ASCII_KEY.test(key) ? key : null;
}
