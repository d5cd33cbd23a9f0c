// Every decision the block logs, as data: its level, status, message and the counters it moves.
// Users alert on these messages and metric names: change one only on purpose, and the README with it.
import type { IdempotencyCounter } from "./metrics";

export type DecisionLevel = "debug" | "info" | "warn" | "error";

/** The `status` field of a log line: a record's status, or what happened to the key or a dependency. */
export type DecisionStatus =
  | "PROCESSING"
  | "SUCCESS"
  | "FAILED"
  | "RELEASED"
  | "LEASE_LOST"
  | "UNRECORDED"
  | "STORE_UNAVAILABLE"
  | "CACHE_ERROR"
  | "CLEANED"
  | "METRICS_ERROR";

/** A counter a decision moves by one: labelled with the key's operation (unless `perOperation: false`) and `labels`. */
export type DecisionCount = {
  counter: IdempotencyCounter;
  labels?: Readonly<Record<string, string>>;
  perOperation?: false;
};

export type Decision = { level: DecisionLevel; status: DecisionStatus; msg: string; counts?: readonly DecisionCount[] };

const executions = (outcome: string): DecisionCount => ({ counter: "executions", labels: { outcome } });
const duplicates = (status: "SUCCESS" | "FAILED" | "PROCESSING"): DecisionCount => ({
  counter: "duplicates",
  labels: { status },
});
const leaseLost = (msg: string): Decision => ({
  level: "error",
  status: "LEASE_LOST",
  msg,
  counts: [{ counter: "leaseLost" }],
});

export const DECISIONS = {
  lockAcquired: { level: "debug", status: "PROCESSING", msg: "idempotency: lock acquired" },
  stored: { level: "info", status: "SUCCESS", msg: "idempotency: executed and stored the response" },
  committed: {
    level: "info",
    status: "SUCCESS",
    msg: "idempotency: executed and committed the response with the operation's writes",
    counts: [executions("success")],
  },
  replayed: {
    level: "info",
    status: "SUCCESS",
    msg: "idempotency: replayed a stored response",
    counts: [duplicates("SUCCESS")],
  },
  rejectedFailed: {
    level: "info",
    status: "FAILED",
    msg: "idempotency: rejected a retry of a failed request",
    counts: [duplicates("FAILED")],
  },
  rejectedInProgress: {
    level: "info",
    status: "PROCESSING",
    msg: "idempotency: rejected a duplicate still in progress",
    counts: [duplicates("PROCESSING")],
  },
  rejectedInProgressLocked: {
    level: "info",
    status: "PROCESSING",
    msg: "idempotency: rejected a duplicate still in progress (its transaction did not finish in time)",
    counts: [duplicates("PROCESSING")],
  },
  /** One line per waiting duplicate, never one per poll: `outcome` says how it ended, `waitedMs` how long. */
  waited: { level: "info", status: "PROCESSING", msg: "idempotency: a duplicate waited for the first attempt" },
  /** Its line carries the stored record's status instead. */
  keyReused: {
    level: "warn",
    status: "PROCESSING",
    msg: "idempotency: key reused with a different request",
    counts: [{ counter: "conflicts" }],
  },
  storeUnavailable: { level: "error", status: "STORE_UNAVAILABLE", msg: "idempotency: store unavailable" },
  releasedUnanswered: {
    level: "warn",
    status: "RELEASED",
    msg: "idempotency: released a record whose create went unanswered",
  },
  unansweredNotReleased: {
    level: "error",
    status: "PROCESSING",
    msg: "idempotency: could not release a record whose create went unanswered; recovery will free it",
  },
  cacheMalformed: {
    level: "warn",
    status: "CACHE_ERROR",
    msg: "idempotency: cache held a malformed record; reading the store",
    counts: [{ counter: "cacheErrors", labels: { method: "get" }, perOperation: false }, { counter: "cacheMisses" }],
  },
  cacheReadFailed: {
    level: "warn",
    status: "CACHE_ERROR",
    msg: "idempotency: cache read failed",
    counts: [{ counter: "cacheErrors", labels: { method: "get" }, perOperation: false }],
  },
  cacheWriteFailed: {
    level: "warn",
    status: "CACHE_ERROR",
    msg: "idempotency: cache write failed",
    counts: [{ counter: "cacheErrors", labels: { method: "set" }, perOperation: false }],
  },
  recovered: {
    level: "warn",
    status: "RELEASED",
    msg: "idempotency: recovered a stuck record",
    counts: [{ counter: "recovered" }],
  },
  recoveredPoisoned: {
    level: "warn",
    status: "FAILED",
    msg: "idempotency: recovered a stuck record",
    counts: [{ counter: "recovered" }, { counter: "poisoned" }],
  },
  /** `cleaned` counts the deleted records, not this line: see `cleanupExpiredRecords`. */
  cleaned: { level: "info", status: "CLEANED", msg: "idempotency: cleaned up expired records" },
  heartbeatFailed: { level: "warn", status: "PROCESSING", msg: "idempotency: heartbeat failed" },
  uncaptured: {
    level: "warn",
    status: "RELEASED",
    msg: "idempotency: the answer could not be captured, key released",
    counts: [executions("uncaptured")],
  },
  permanentFailure: {
    level: "info",
    status: "FAILED",
    msg: "idempotency: permanent failure, key marked FAILED",
    counts: [executions("permanent_failure")],
  },
  poisoned: {
    level: "warn",
    status: "FAILED",
    msg: "idempotency: retry budget spent, key poisoned",
    counts: [{ counter: "poisoned" }, executions("poisoned")],
  },
  transientFailure: {
    level: "info",
    status: "RELEASED",
    msg: "idempotency: transient failure, key released for retry",
    counts: [{ counter: "retries" }, executions("transient_failure")],
  },
  failureNotRecorded: {
    level: "error",
    status: "PROCESSING",
    msg: "idempotency: could not record a failure; recovery will settle the key",
  },
  storingFailed: { level: "warn", status: "PROCESSING", msg: "idempotency: storing the response failed" },
  unrecorded: {
    level: "error",
    status: "UNRECORDED",
    msg: "idempotency: operation succeeded but its response could not be stored",
    counts: [{ counter: "unrecorded" }],
  },
  leaseLostDuringExecution: leaseLost("idempotency: lease lost during execution"),
  leaseLostResponseNotStored: leaseLost("idempotency: lease lost, response not stored"),
  leaseLostFailureNotCounted: leaseLost("idempotency: lease lost, failure not counted"),
  leaseLostReleaseSkipped: leaseLost("idempotency: lease lost, release skipped"),
  leaseLostMarkFailedSkipped: leaseLost("idempotency: lease lost, markFailed skipped"),
  failureResponseThrew: {
    level: "warn",
    status: "PROCESSING",
    msg: "idempotency: failureResponse threw; the failed key keeps no response",
  },
  isPermanentErrorThrew: {
    level: "warn",
    status: "PROCESSING",
    msg: "idempotency: isPermanentError threw; treating the failure as transient",
  },
  rolledBackPermanentFailure: {
    level: "info",
    status: "FAILED",
    msg: "idempotency: permanent failure, writes rolled back, key marked FAILED",
    counts: [executions("permanent_failure")],
  },
  rolledBackPoisoned: {
    level: "warn",
    status: "FAILED",
    msg: "idempotency: retry budget spent, writes rolled back, key poisoned",
    counts: [{ counter: "poisoned" }, executions("poisoned")],
  },
  rolledBackTransientFailure: {
    level: "info",
    status: "RELEASED",
    msg: "idempotency: transient failure, writes rolled back, key free for retry",
    counts: [{ counter: "retries" }, executions("transient_failure")],
  },
  rolledBackFailureNotRecorded: {
    level: "error",
    status: "RELEASED",
    msg: "idempotency: could not record a failure after the rollback; the key stays free",
  },
  messageDead: { level: "warn", status: "FAILED", msg: "idempotency: message dead (failed for good), acknowledged" },
  onDeadGaveUp: {
    level: "error",
    status: "FAILED",
    msg: "idempotency: onDead kept failing; the dead message is acknowledged without it",
  },
  messageIdInvalid: {
    level: "warn",
    status: "FAILED",
    msg: "idempotency: message refused: its id is missing or malformed, nothing ran",
  },
  metricsSinkThrew: { level: "warn", status: "METRICS_ERROR", msg: "idempotency: metrics sink threw" },
} as const satisfies Record<string, Decision>;

export type DecisionName = keyof typeof DECISIONS;
