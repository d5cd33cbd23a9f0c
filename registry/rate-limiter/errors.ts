// RateLimitError: RATE_LIMITED (429), RATE_LIMIT_BANNED (403) or RATE_LIMITER_UNAVAILABLE (503), recognised by its code.
import { BLOCK_ERROR_STATUSES } from "./block-error-codes";

export const RateLimitErrorCode = {
  RATE_LIMITED: "RATE_LIMITED",
  /** Too many refusals in a window (the limiter's `ban`), or a deny-listed address: 403 for the ban's duration. */
  RATE_LIMIT_BANNED: "RATE_LIMIT_BANNED",
  /** The store failed and the limiter is configured to fail closed. */
  RATE_LIMITER_UNAVAILABLE: "RATE_LIMITER_UNAVAILABLE",
} as const;
export type RateLimitErrorCode = (typeof RateLimitErrorCode)[keyof typeof RateLimitErrorCode];

export const RATE_LIMIT_ERROR_STATUS: Readonly<Record<RateLimitErrorCode, number>> = BLOCK_ERROR_STATUSES.rateLimiter;

export type RateLimitErrorOptions = {
  cause?: unknown;
  retryAfterSeconds?: number | undefined;
  /** The headers the response should carry (`retry-after`, `ratelimit-policy`, `ratelimit`: names in lower case). */
  headers?: Record<string, string> | undefined;
};

/**
 * The error `RateLimiter.consume` rejects with, and the adapters answer with. `status` and `headers`
 * are on the error so an app-wide error handler can send it without knowing this block.
 *
 * @example
 * if (isRateLimitError(err)) res.status(err.status).set(err.headers).json(err.toJSON());
 */
export class RateLimitError extends Error {
  override readonly name = "RateLimitError";
  readonly code: RateLimitErrorCode;
  readonly status: number;
  readonly retryAfterSeconds: number | undefined;
  readonly headers: Record<string, string>;

  constructor(code: RateLimitErrorCode, message: string, options: RateLimitErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = RATE_LIMIT_ERROR_STATUS[code];
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.headers = options.headers ?? {};
  }

  /** The response body: `{ error: { code, message } }`, as the idempotency block sends. */
  toJSON(): { error: { code: RateLimitErrorCode; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}

const KNOWN_CODES = new Set<string>(Object.values(RateLimitErrorCode));

/**
 * True for a RateLimitError from any copy of this module (an app can vendor it twice).
 *
 * @example
 * if (isRateLimitError(err)) return reply.code(err.status).headers(err.headers).send(err.toJSON());
 */
export function isRateLimitError(err: unknown): err is RateLimitError {
  return (
    typeof err === "object" &&
    err !== null &&
    KNOWN_CODES.has((err as { code?: unknown }).code as string) &&
    (err as { name?: unknown }).name === "RateLimitError"
  );
}

/**
 * A promise rejected with exactly what was thrown, for a synchronous throw in code that answers with
 * a promise. Written as `throw`, so it needs no cast to Error that one project's lint requires and
 * another's calls unnecessary.
 */
export function rejectedWith(thrown: unknown): Promise<never> {
  return new Promise<never>(() => {
    throw thrown;
  });
}
