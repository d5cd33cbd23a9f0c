// OutboxError: bad input to addToOutbox or startOutboxRelay, recognised by `code` (vendored code may exist twice in one app).

export const OUTBOX_INVALID_MESSAGE = "OUTBOX_INVALID_MESSAGE";
export const OUTBOX_INVALID_OPTIONS = "OUTBOX_INVALID_OPTIONS";

export type OutboxErrorCode = typeof OUTBOX_INVALID_MESSAGE | typeof OUTBOX_INVALID_OPTIONS;

export class OutboxError extends Error {
  readonly code: OutboxErrorCode;

  constructor(code: OutboxErrorCode, message: string) {
    super(message);
    this.name = "OutboxError";
    this.code = code;
  }
}

/** True for an OutboxError from any copy of this file. */
export function isOutboxError(error: unknown): error is OutboxError {
  const code = (error as { code?: unknown } | null)?.code;
  return code === OUTBOX_INVALID_MESSAGE || code === OUTBOX_INVALID_OPTIONS;
}
