// The errors a refusal becomes: RATE_LIMITED (429) with its headers, RATE_LIMIT_BANNED (403) with its Retry-After.
import { RateLimitError } from "./errors";
import { rateLimitHeaders, retryAfterSeconds } from "./http/headers";
import type { RateLimitDecision } from "./types";

/**
 * The error for a refused decision: RATE_LIMIT_BANNED when the caller is banned, else RATE_LIMITED,
 * each with its `Retry-After` (a deny-listed caller's ban has none) and RateLimit headers.
 *
 * @example
 * if (!decision.allowed) throw rateLimitedError(decision);
 */
export function rateLimitedError(decision: RateLimitDecision): RateLimitError {
  if (decision.banned) {
    const forever = decision.retryAfterMs === Infinity;
    return new RateLimitError("RATE_LIMIT_BANNED", "Too many refused requests: banned for a while.", {
      retryAfterSeconds: forever ? undefined : retryAfterSeconds(decision),
      headers: forever ? {} : { "retry-after": String(retryAfterSeconds(decision)) },
    });
  }
  return new RateLimitError("RATE_LIMITED", "Too many requests: retry later.", {
    retryAfterSeconds: retryAfterSeconds(decision),
    headers: rateLimitHeaders(decision),
  });
}
