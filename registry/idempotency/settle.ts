// Records how an execution ended: its result on success, FAILED / released / poisoned on failure.
import { keyFields, type Observer } from "./observer";
import type { IdempotencyScope, IdempotencyStore } from "./types";
import { sleep, withTimeout } from "./utils/with-timeout";

/** Everything needed to write the outcome of the one execution that holds `token`. */
export type Settlement = {
  store: IdempotencyStore;
  scope: IdempotencyScope;
  token: string;
  observer: Observer;
  settings: { ttlMs: number; maxRetries: number; storeTimeoutMs: number; completionAttempts: number };
};

export type FailureOutcome = "permanent_failure" | "transient_failure" | "poisoned" | "unrecordable";

/** How the caller classifies what the operation threw (see ExecuteOptions). */
export type FailureClassifiers = {
  isPermanentError?: (err: unknown) => boolean;
  isUnrecordable?: (err: unknown) => boolean;
  /** What to keep with a key this error marks FAILED (see ExecuteOptions). */
  failureResponse?: (err: unknown) => unknown;
};

/**
 * A permanent error marks the key FAILED; a transient one counts a retry and frees the key, or
 * poisons it once `maxRetries` is reached; an unrecordable answer frees the key without counting.
 * If the store cannot be written, the record stays PROCESSING and `recoverStuckRecords` settles it
 * later; the caller still gets the original error.
 */
export async function settleFailure(s: Settlement, err: unknown, classifiers: FailureClassifiers = {}): Promise<FailureOutcome> {
  const { scope, observer } = s;
  const labels = { operation: scope.operation };
  // Not a failure at all: the answer went out, it just cannot be kept. Asked first, so no other classifier sees it.
  const unrecordable = classify(s, err, "isUnrecordable", classifiers.isUnrecordable);
  const permanent = !unrecordable && classify(s, err, "isPermanentError", classifiers.isPermanentError);
  try {
    if (unrecordable) {
      await held(s, "release", s.store.release(scope, s.token));
      observer.decision("warn", "idempotency: the answer could not be recorded, key released", { ...scope, status: "RELEASED", err }, "executions", {
        ...labels,
        outcome: "unrecordable",
      });
      return "unrecordable";
    }
    if (permanent) {
      await held(s, "markFailed", s.store.markFailed(scope, s.token, s.settings.ttlMs, keptFailureResponse(observer, scope, err, classifiers.failureResponse)));
      observer.decision("info", "idempotency: permanent failure, key marked FAILED", { ...scope, status: "FAILED", err }, "executions", {
        ...labels,
        outcome: "permanent_failure",
      });
      return "permanent_failure";
    }
    // The counter is not fenced: a stale execution (recovered, maybe re-run by another owner) must
    // not spend the key's budget. A held heartbeat also renews the lease for the writes below.
    if (!(await call(s, "heartbeat", s.store.heartbeat(scope, s.token, s.settings.ttlMs)))) {
      observer.decision("error", "idempotency: lease lost, failure not counted", { ...scope, status: "LEASE_LOST", err }, "leaseLost", labels);
      return "transient_failure";
    }
    const retryCount = await call(s, "incrementRetryCount", s.store.incrementRetryCount(scope, s.settings.ttlMs));
    if (retryCount >= s.settings.maxRetries) {
      await held(s, "markFailed", s.store.markFailed(scope, s.token, s.settings.ttlMs, keptFailureResponse(observer, scope, err, classifiers.failureResponse)));
      observer.decision("warn", "idempotency: retry budget spent, key poisoned", { ...scope, status: "FAILED", retryCount, err }, "poisoned", labels);
      observer.count("executions", { ...labels, outcome: "poisoned" });
      return "poisoned";
    }
    await held(s, "release", s.store.release(scope, s.token));
    observer.decision("info", "idempotency: transient failure, key released for retry", { ...scope, status: "RELEASED", retryCount, err }, "retries", labels);
    observer.count("executions", { ...labels, outcome: "transient_failure" });
    return "transient_failure";
  } catch (storeErr) {
    observer.decision("error", "idempotency: could not record a failure; recovery will settle the key", {
      ...scope,
      status: "PROCESSING",
      err: storeErr,
    });
    return permanent ? "permanent_failure" : "transient_failure";
  }
}

/**
 * Writes the result, retrying store errors a few times. Returns the serialized result and whether it
 * was stored: an unrecorded success is logged and counted, and the caller still gets its result.
 */
export async function completeSuccess(s: Settlement, result: unknown): Promise<{ serialized: string | null; recorded: boolean }> {
  const { scope, observer } = s;
  let serialized: string | null;
  try {
    serialized = serialize(result);
  } catch (err) {
    // The operation already ran: poison the key rather than let a retry run it again.
    await settleFailure(s, err, { isPermanentError: () => true });
    throw new TypeError(`idempotency: the operation's result cannot be stored as JSON (${String(err)}); the key is marked FAILED.`, {
      cause: err,
    });
  }
  observer.count("executions", { operation: scope.operation, outcome: "success" });
  let failedBefore = false;
  for (let attempt = 1; attempt <= s.settings.completionAttempts; attempt++) {
    try {
      const stored = await withTimeout(s.store.markSuccess(scope, s.token, serialized, s.settings.ttlMs), s.settings.storeTimeoutMs, "store.markSuccess");
      // After a timed-out attempt the write may have landed anyway: then the record is ours and SUCCESS.
      if (stored || (failedBefore && (await alreadyStored(s)))) {
        observer.decision("info", "idempotency: executed and stored the response", keyFields(scope, "SUCCESS"));
        return { serialized, recorded: true };
      }
      observer.decision("error", "idempotency: lease lost, response not stored", { ...scope, status: "LEASE_LOST" }, "leaseLost", {
        operation: scope.operation,
      });
      return { serialized, recorded: false };
    } catch (err) {
      failedBefore = true;
      observer.decision("warn", "idempotency: storing the response failed", { ...scope, status: "PROCESSING", attempt, err }, "storeErrors", {
        method: "markSuccess",
      });
      if (attempt < s.settings.completionAttempts) await sleep(50 * 2 ** (attempt - 1));
    }
  }
  observer.decision("error", "idempotency: operation succeeded but its response could not be stored", { ...scope, status: "UNRECORDED" }, "unrecorded", {
    operation: scope.operation,
  });
  return { serialized, recorded: false };
}

function serialize(result: unknown): string | null {
  if (result === undefined) return null;
  const json = JSON.stringify(result);
  return json === undefined ? null : json;
}

/**
 * The serialized answer to keep with a failed key (both `execute` and `executeInTransaction` use it);
 * a keeper that throws keeps nothing rather than lose the failure.
 */
export function keptFailureResponse(observer: Observer, scope: IdempotencyScope, err: unknown, failureResponse?: (err: unknown) => unknown): string | null {
  if (!failureResponse) return null;
  try {
    return serialize(failureResponse(err));
  } catch (keeperErr) {
    observer.log("warn", "idempotency: failureResponse threw; the failed key keeps no response", { ...scope, status: "PROCESSING", err: keeperErr });
    return null;
  }
}

function classify(s: Settlement, err: unknown, name: keyof FailureClassifiers, classifier?: (err: unknown) => boolean): boolean {
  if (!classifier) return false;
  try {
    return classifier(err) === true;
  } catch (classifierErr) {
    s.observer.log("warn", `idempotency: ${name} threw; treating the failure as transient`, {
      ...s.scope,
      status: "PROCESSING",
      err: classifierErr,
    });
    return false;
  }
}

async function alreadyStored(s: Settlement): Promise<boolean> {
  try {
    const record = await withTimeout(s.store.get(s.scope), s.settings.storeTimeoutMs, "store.get");
    return record?.token === s.token && record.status === "SUCCESS";
  } catch {
    return false;
  }
}

async function call<T>(s: Settlement, method: string, promise: Promise<T>): Promise<T> {
  try {
    return await withTimeout(promise, s.settings.storeTimeoutMs, `store.${method}`);
  } catch (err) {
    s.observer.count("storeErrors", { method });
    throw err;
  }
}

async function held(s: Settlement, method: string, promise: Promise<boolean>): Promise<void> {
  if (!(await call(s, method, promise))) {
    s.observer.decision("error", `idempotency: lease lost, ${method} skipped`, { ...s.scope, status: "LEASE_LOST" }, "leaseLost", {
      operation: s.scope.operation,
    });
  }
}
