// IdempotencyError: a stable machine-readable code per failure, and its default HTTP status.
import { BLOCK_ERROR_STATUSES } from "./block-error-codes";

export const IdempotencyErrorCode = {
  IDEMPOTENCY_KEY_MISSING: "IDEMPOTENCY_KEY_MISSING",
  IDEMPOTENCY_KEY_INVALID: "IDEMPOTENCY_KEY_INVALID",
  IDEMPOTENCY_PAYLOAD_INVALID: "IDEMPOTENCY_PAYLOAD_INVALID",
  RECORD_NOT_FOUND: "RECORD_NOT_FOUND",
  KEY_REUSED_WITH_DIFFERENT_REQUEST: "KEY_REUSED_WITH_DIFFERENT_REQUEST",
  REQUEST_IN_PROGRESS: "REQUEST_IN_PROGRESS",
  REQUEST_FAILED: "REQUEST_FAILED",
  STORE_UNAVAILABLE: "STORE_UNAVAILABLE",
} as const;
export type IdempotencyErrorCode = (typeof IdempotencyErrorCode)[keyof typeof IdempotencyErrorCode];

export const DEFAULT_ERROR_STATUS: Readonly<Record<IdempotencyErrorCode, number>> = BLOCK_ERROR_STATUSES.idempotency;

/** Per-route overrides of the default statuses, e.g. `{ REQUEST_IN_PROGRESS: 425 }`. */
export type IdempotencyStatusMap = Partial<Record<IdempotencyErrorCode, number>>;

export type IdempotencyErrorOptions = {
  cause?: unknown;
  /** For REQUEST_IN_PROGRESS: how long the client should wait before it retries. */
  retryAfterSeconds?: number | undefined;
  /** For REQUEST_FAILED: what the failed execution answered, when it was kept with the key. */
  response?: unknown;
  /** The HTTP status to answer with. @default the code's default status (DEFAULT_ERROR_STATUS) */
  status?: number;
};

/**
 * The error every idempotency decision rejects with.
 * Recognise it with `isIdempotencyError` (by its `code`), not `instanceof`: an app can hold two
 * vendored copies of this class.
 *
 * @example
 * if (isIdempotencyError(err)) res.status(idempotencyErrorStatus(err)).json(err.toJSON());
 */
export class IdempotencyError extends Error {
  override readonly name = "IdempotencyError";
  readonly code: IdempotencyErrorCode;
  readonly retryAfterSeconds: number | undefined;
  /** For REQUEST_FAILED: the failed execution's answer (over HTTP, its status and body), if it was kept. */
  readonly response: unknown;
  /** The HTTP status, as error handlers read it (Express's default one, http-errors style): the route's `statusMap` applied when an adapter hands it on. */
  readonly status: number;

  constructor(code: IdempotencyErrorCode, message: string, options: IdempotencyErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.response = options.response;
    this.status = options.status ?? DEFAULT_ERROR_STATUS[code];
  }

  /** The response body every adapter sends: `{ error: { code, message } }`. */
  toJSON(): { error: { code: IdempotencyErrorCode; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}

const KNOWN_CODES = new Set<string>(Object.values(IdempotencyErrorCode));

/** True for an IdempotencyError from any copy of this module. */
export function isIdempotencyError(err: unknown): err is IdempotencyError {
  return (
    typeof err === "object" &&
    err !== null &&
    typeof (err as { code?: unknown }).code === "string" &&
    KNOWN_CODES.has((err as { code: string }).code) &&
    (err as { name?: unknown }).name === "IdempotencyError"
  );
}

/**
 * The HTTP status for an error: the route's `statusMap`, then the defaults; 500 for anything else.
 *
 * @example
 * idempotencyErrorStatus(err, { REQUEST_IN_PROGRESS: 425 });
 */
export function idempotencyErrorStatus(err: unknown, statusMap: IdempotencyStatusMap = {}): number {
  if (!isIdempotencyError(err)) return 500;
  return statusMap[err.code] ?? DEFAULT_ERROR_STATUS[err.code];
}
