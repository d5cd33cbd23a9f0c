// What identifies one protected operation, checked once before any store sees it.
import { IdempotencyError } from "./errors";
import type { IdempotencyScope } from "./types";

const VISIBLE_ASCII_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * `String.prototype.isWellFormed` (Node 20, Bun, Deno), typed here so a project whose `lib` predates
 * ES2024 still compiles. V8 answers it at once for a string stored one byte per character (every
 * ASCII name): no scan at all, where a regular expression for a lone surrogate walks every character.
 */
type CheckableText = string & { isWellFormed(): boolean };

/** The one rule for a key, wherever it comes from (a header, a queue message): 1-255 visible ASCII characters. */
export function isIdempotencyKey(value: unknown): value is string {
  return typeof value === "string" && VISIBLE_ASCII_KEY.test(value);
}

/** The scope `execute` was given, checked: a key that breaks the rule is IDEMPOTENCY_KEY_INVALID, a malformed name a TypeError. */
export function checkScope({ operation, userId, key }: IdempotencyScope): IdempotencyScope {
  checkScopeString("operation", operation);
  checkScopeString("userId", userId);
  if (!isIdempotencyKey(key)) {
    throw new IdempotencyError(
      "IDEMPOTENCY_KEY_INVALID",
      "The Idempotency-Key must be 1 to 255 visible ASCII characters.",
    );
  }
  return { operation, userId, key };
}

/** Refused before any store sees it: a store that folds malformed text could put two users in one row. */
function checkScopeString(name: string, value: unknown): void {
  if (typeof value !== "string" || value === "")
    throw new TypeError(`idempotency: \`${name}\` must be a non-empty string.`);
  // A UTF-16 surrogate without its pair is not Unicode text, and PostgreSQL folds every one into U+FFFD.
  if (!(value as CheckableText).isWellFormed())
    throw new TypeError(`idempotency: \`${name}\` must be well-formed Unicode (it holds a lone surrogate).`);
}
