// The failure policy of both execution modes: what the operation's error is, and how the key settles after it.
import type { BoundedStore } from "./bounded-store";
import type { DecisionName } from "./decisions";
import type { Observer } from "./observer";
import { serializeResult, UnstorableResultError } from "./result-json";
import type { IdempotencyScope } from "./types";

/** As `idempotency_executions_total{outcome}` and the duration histogram label a failed execution. */
export type FailureOutcome = "permanent_failure" | "transient_failure" | "poisoned" | "uncaptured";

/**
 * How the caller classifies what the operation threw (`execute`'s options, and `executeInTransaction`'s). An answer
 * that went out but cannot be kept (a streamed HTTP response) is not thrown: the operation returns it as an
 * UnkeptAnswer of kind "uncaptured".
 */
export type FailureClassifiers = {
  /** True when the error can never succeed on retry: the key is marked FAILED at once. */
  isPermanentError?: ((err: unknown) => boolean) | undefined;
  /**
   * What to keep with a key that this error fails for good (JSON-safe, e.g. the HTTP error response):
   * later calls get it as `REQUEST_FAILED`'s `response`. @default nothing is kept
   */
  failureResponse?: ((err: unknown) => unknown) | undefined;
  /**
   * This call is the caller's last attempt (a broker's last delivery of a message): a transient
   * failure spends the rest of the key's budget, so the key is poisoned now rather than left for an
   * attempt that will never come. @default false
   */
  lastAttempt?: boolean | undefined;
};

/** `uncaptured`: not a failure at all, the answer went out and cannot be kept. */
export type FailureKind = "uncaptured" | "permanent" | "transient";

/** Filled in as an execution runs, for a caller that must know how it ended without reading the store again (`consume`). */
export type RunReport = {
  /** The operation started. */
  ran: boolean;
  /** Its failure left the key FAILED (permanent, or the last of its budget): no attempt will run again. */
  dead: boolean;
};

/** What settling a failure uses: the bounded store (for the retry counter), the observer and the budget. */
export type FailurePolicy = {
  store: BoundedStore;
  observer: Observer;
  settings: { ttlMs: number; maxRetries: number };
};

export type Failure = {
  /** What the operation threw, as the log line names it. */
  err: unknown;
  kind: FailureKind;
  /** The serialized answer to keep with the key; asked only when the failure marks it FAILED. */
  kept: () => string | null;
  report?: RunReport | undefined;
  /** See FailureClassifiers' `lastAttempt`. */
  lastAttempt?: boolean | undefined;
};

/** How one mode writes a settlement to the key. */
export type SettlementWrites = {
  /** Whether this failure may still spend the key's budget (`execute`: its lease is held). Absent: always. */
  ownsKey?: () => Promise<boolean>;
  /** Frees the key for the next attempt. Absent: the rollback freed it. */
  free?: () => Promise<unknown>;
  /** Records the key FAILED with `kept`; false when another execution holds the key now. */
  markFailed: (kept: string | null) => Promise<boolean>;
};

/** The decisions each mode logs for the same settlement. */
export type SettlementDecisions = Record<"permanent" | "poisoned" | "transient" | "notRecorded", DecisionName>;

/** `execute`: the record is written under the execution's lease. */
export const LEASED: SettlementDecisions = {
  permanent: "permanentFailure",
  poisoned: "poisoned",
  transient: "transientFailure",
  notRecorded: "failureNotRecorded",
};

/** `executeInTransaction`: the writes and the record already rolled back. */
export const ROLLED_BACK: SettlementDecisions = {
  permanent: "rolledBackPermanentFailure",
  poisoned: "rolledBackPoisoned",
  transient: "rolledBackTransientFailure",
  notRecorded: "rolledBackFailureNotRecorded",
};

/** Asks the caller's classifiers about an error; a result JSON cannot carry is permanent (the operation already ran). */
export function classifyFailure(
  observer: Observer,
  scope: IdempotencyScope,
  err: unknown,
  classifiers: FailureClassifiers,
): FailureKind {
  const permanent =
    err instanceof UnstorableResultError || isPermanent(observer, scope, err, classifiers.isPermanentError);
  return permanent ? "permanent" : "transient";
}

/**
 * A permanent error marks the key FAILED; a transient one counts a retry and frees the key, or
 * poisons it once `maxRetries` is reached or on the caller's last attempt; an uncapturable answer frees the key without counting.
 * If the store cannot be written, the key stays as it is (PROCESSING until recovery, or free after
 * a rollback); the caller still gets the original error. Tells `failure.report` whether the key is dead.
 */
export async function settleFailure(
  policy: FailurePolicy,
  scope: IdempotencyScope,
  failure: Failure,
  writes: SettlementWrites,
  decisions: SettlementDecisions,
): Promise<FailureOutcome> {
  const { store, observer, settings } = policy;
  const { err, kind, report } = failure;
  try {
    if (kind === "uncaptured") {
      await writes.free?.();
      observer.record("uncaptured", scope, { err });
      return "uncaptured";
    }
    if (kind === "permanent") {
      const dead = await writes.markFailed(failure.kept());
      if (report) report.dead = dead;
      observer.record(decisions.permanent, scope, { err });
      return "permanent_failure";
    }
    // The counter is not fenced: a stale execution (recovered, maybe re-run by another owner) must
    // not spend the key's budget. A held heartbeat also renews the lease for the writes below.
    if (writes.ownsKey && !(await writes.ownsKey())) {
      observer.record("leaseLostFailureNotCounted", scope, { err });
      return "transient_failure";
    }
    const retryCount = await store.call("incrementRetryCount", (bounded) =>
      bounded.incrementRetryCount(scope, settings.ttlMs),
    );
    if (retryCount >= settings.maxRetries || failure.lastAttempt === true) {
      const dead = await writes.markFailed(failure.kept());
      if (report) report.dead = dead;
      observer.record(decisions.poisoned, scope, { retryCount, err });
      return "poisoned";
    }
    await writes.free?.();
    observer.record(decisions.transient, scope, { retryCount, err });
    return "transient_failure";
  } catch (storeErr) {
    observer.record(decisions.notRecorded, scope, { err: storeErr });
    return kind === "permanent" ? "permanent_failure" : "transient_failure";
  }
}

/** The serialized answer to keep with a failed key; a keeper that throws keeps nothing rather than lose the failure. */
export function keptFailureResponse(
  observer: Observer,
  scope: IdempotencyScope,
  err: unknown,
  failureResponse?: (err: unknown) => unknown,
): string | null {
  if (!failureResponse) return null;
  try {
    return serializeResult(failureResponse(err));
  } catch (keeperErr) {
    observer.record("failureResponseThrew", scope, { err: keeperErr });
    return null;
  }
}

/** Asks the user's `isPermanentError` about an error; one that throws is logged and answers false (the failure stays transient). */
function isPermanent(
  observer: Observer,
  scope: IdempotencyScope,
  err: unknown,
  classifier?: (err: unknown) => boolean,
): boolean {
  if (!classifier) return false;
  try {
    return classifier(err) === true;
  } catch (classifierErr) {
    observer.record("isPermanentErrorThrew", scope, { err: classifierErr });
    return false;
  }
}
