// The codes the blocks' own errors carry and the status each answers with: one source, copied into every block that raises or answers them.

/**
 * Each block's codes with their default HTTP status. The idempotency and rate-limiter blocks build
 * their errors from their row; the error handler learns both by `code` (no import of another block),
 * and an error's own `status` (an idempotency route's `statusMap` applied) still wins over this.
 *
 * @example
 * BLOCK_ERROR_STATUSES.idempotency.REQUEST_IN_PROGRESS; // 409
 */
export const BLOCK_ERROR_STATUSES = {
  idempotency: {
    IDEMPOTENCY_KEY_MISSING: 400,
    IDEMPOTENCY_KEY_INVALID: 400,
    IDEMPOTENCY_PAYLOAD_INVALID: 400,
    RECORD_NOT_FOUND: 404,
    KEY_REUSED_WITH_DIFFERENT_REQUEST: 409,
    REQUEST_IN_PROGRESS: 409,
    REQUEST_FAILED: 409,
    STORE_UNAVAILABLE: 503,
  },
  rateLimiter: {
    RATE_LIMITED: 429,
    /** Too many refusals in a window (the limiter's `ban`), or a deny-listed address. */
    RATE_LIMIT_BANNED: 403,
    /** The store failed and the limiter fails closed. */
    RATE_LIMITER_UNAVAILABLE: 503,
  },
} as const satisfies Record<string, Readonly<Record<string, number>>>;
