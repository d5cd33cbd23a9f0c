// The IdempotencyErrors both execution modes refuse a call with, each worded once.
import { IdempotencyError } from "./errors";
import type { StoreMethod } from "./bounded-store";
import type { Observer } from "./observer";
import type { IdempotencyScope } from "./types";

export function keyReused(): IdempotencyError {
  return new IdempotencyError(
    "KEY_REUSED_WITH_DIFFERENT_REQUEST",
    "This Idempotency-Key was already used with a different request payload; use a new key for a new request.",
  );
}

/** `response`: what the failed execution answered, when it was kept with the key. */
export function requestFailed(response: unknown): IdempotencyError {
  return new IdempotencyError(
    "REQUEST_FAILED",
    "The request with this Idempotency-Key failed permanently; use a new key to try again.",
    { response },
  );
}

export function requestInProgress(retryAfterSeconds: number): IdempotencyError {
  return new IdempotencyError(
    "REQUEST_IN_PROGRESS",
    "A request with this Idempotency-Key is still being processed; retry later.",
    { retryAfterSeconds },
  );
}

/**
 * Logs a failed store call and returns the error the caller gets for it. `ran`: a transaction whose
 * operation ran and whose commit went unconfirmed (the retry tells which), as the log line says.
 *
 * @example
 * throw storeUnavailable(observer, "create", err, scope);
 */
export function storeUnavailable(
  observer: Observer,
  method: StoreMethod,
  err: unknown,
  scope?: IdempotencyScope,
  ran?: boolean,
): IdempotencyError {
  observer.record("storeUnavailable", scope, ran === undefined ? { method, err } : { method, ran, err });
  return new IdempotencyError(
    "STORE_UNAVAILABLE",
    ran === true
      ? "The database did not confirm the transaction; retry with the same key: it replays if the transaction committed, and runs if it did not."
      : "The idempotency store is unavailable; the request was not executed. Retry later.",
    { cause: err },
  );
}
