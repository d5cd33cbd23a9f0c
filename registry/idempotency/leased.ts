// execute's path: the record leased to one execution while its operation runs, and a duplicate answered or made to wait.
import { randomUUID } from "node:crypto";
import type { BoundedStore } from "./bounded-store";
import { Execution, type ExecutionSettings, type Leases } from "./execution";
import type { FailureClassifiers, RunReport } from "./failure-policy";
import { hashPayload } from "./fingerprint";
import type { Observer } from "./observer";
import type { IdempotentOperation } from "./operation-context";
import type { ReadSide } from "./read-side";
import { storeUnavailable } from "./refusals";
import { releaseUnanswered } from "./release-unanswered";
import { freshResult } from "./result-json";
import { checkScope } from "./scope";
import type { CreateResult, ExecuteResult, IdempotencyScope, StepResults } from "./types";
import { UnkeptAnswer, unkeptFailure } from "./unkept-answer";
import { checkWaitMs, waitForFirstAttempt, type WaitAccess } from "./wait-for-record";

/** What to protect: the scope, and either the payload to fingerprint or its precomputed hash. */
export type ExecuteContext = IdempotencyScope & ({ payload: unknown } | { requestHash: string });

/** How the operation's errors are classified (see FailureClassifiers), and how a duplicate of a running call waits. */
export type ExecuteOptions = FailureClassifiers & {
  /** This call's `waitMs` (see IdempotencyHandlerOptions). @default the handler's */
  waitMs?: number | undefined;
  /** Aborts a duplicate's wait (the client went away): it answers REQUEST_IN_PROGRESS at once. */
  signal?: AbortSignal | undefined;
};

/** What this path shares with the handler, as the handler holds it: the bounded store, observer, settings, leases and read side. */
export type LeasedCore = {
  store: BoundedStore;
  observer: Observer;
  settings: ExecutionSettings & { waitMs: number };
  /** Renews the lease of every running execution from one interval. */
  leases: Leases;
  reads: ReadSide;
};

/**
 * `execute`: creates the record under a fresh fencing token, runs the operation while its lease is
 * held, and stores the result; a key that already holds a record is answered from it (after a wait
 * for a running first attempt, with `waitMs`). An operation that returns an UnkeptAnswer settles the
 * key from it and gets it back as the response. `report` (for `consume`) learns whether the operation
 * ran and whether its failure left the key FAILED. A first request and a replay each go through one
 * async frame here: every extra frame or returned promise costs the request a microtask hop.
 */
export async function executeLeased<T>(
  core: LeasedCore,
  context: ExecuteContext,
  operation: IdempotentOperation<T>,
  options: ExecuteOptions,
  report: RunReport | undefined,
): Promise<ExecuteResult<T>> {
  const scope = checkScope(context);
  const requestHash = "requestHash" in context ? context.requestHash : hashPayload(context.payload);
  const { reads, observer } = core;
  // Without a cache there is nothing to wait for: no await, so no promise hop on every request.
  const cached = reads.hasCache ? await reads.readCache(scope) : undefined;
  if (cached) return reads.answer<T>(scope, cached, requestHash, "cache");

  const waitMs = options.waitMs === undefined ? core.settings.waitMs : checkWaitMs(options.waitMs);
  let token: string = randomUUID();
  // The first create is awaited here rather than through `create`: an async frame less on every request.
  let creating: Promise<CreateResult> | undefined;
  let created: CreateResult;
  try {
    created = await core.store.call(
      "create",
      (target) => (creating = target.create({ scope, requestHash, ttlMs: core.settings.ttlMs, token })),
    );
  } catch (err) {
    throw createFailed(core, scope, token, creating, err);
  }
  let steps: StepResults | undefined;
  if (created.status === "CREATED") steps = created.steps;
  else {
    const { record } = created;
    // Only a duplicate of a running attempt with the same payload waits; any other is answered at once.
    if (!(waitMs > 0 && record.status === "PROCESSING" && record.requestHash === requestHash))
      return reads.answerStored<T>(scope, record, requestHash);
    const access: WaitAccess = {
      get: () => getRecord(core, scope),
      create: (retryToken) => create(core, scope, requestHash, retryToken),
    };
    const waited = await waitForFirstAttempt(access, observer, {
      scope,
      requestHash,
      record,
      waitMs,
      signal: options.signal,
    });
    if ("record" in waited) return reads.answerStored<T>(scope, waited.record, requestHash);
    // The first attempt gave the key back while we waited, and our own create took it.
    ({ token, steps } = waited);
  }
  observer.record("lockAcquired", scope);

  const execution = new Execution(core.store, observer, core.settings, core.leases, scope, token, steps);
  execution.holdLease();
  if (report) report.ran = true;
  // The clock is read only for a metrics sink that records durations.
  const started = observer.counting ? performance.now() : 0;
  let result: T;
  try {
    // The execution is the context itself: no object of its own per request.
    result = await operation(execution);
  } catch (err) {
    execution.stopLease();
    const outcome = await execution.fail(err, options, report);
    if (observer.counting) observer.duration(scope.operation, outcome, (performance.now() - started) / 1000);
    throw err;
  }
  execution.stopLease();
  // An answer the key must not keep: settled from the value, handed back as it is.
  if (result instanceof UnkeptAnswer) {
    const failure = unkeptFailure(observer, scope, result, report, options.lastAttempt);
    const outcome = await execution.settle(failure);
    if (observer.counting) observer.duration(scope.operation, outcome, (performance.now() - started) / 1000);
    return { response: result, replayed: false };
  }
  if (observer.counting) observer.duration(scope.operation, "success", (performance.now() - started) / 1000);
  const { serialized, recorded } = await execution.complete(result, report);
  if (recorded && reads.hasCache) await reads.keepResult(scope, requestHash, serialized);
  return freshResult<T>(serialized);
}

/** The record, under the token chosen here; a failure is STORE_UNAVAILABLE, and frees a record it may have made. */
async function create(
  core: LeasedCore,
  scope: IdempotencyScope,
  requestHash: string,
  token: string,
): Promise<CreateResult> {
  let creating: Promise<CreateResult> | undefined;
  try {
    return await core.store.call(
      "create",
      (target) => (creating = target.create({ scope, requestHash, ttlMs: core.settings.ttlMs, token })),
    );
  } catch (err) {
    throw createFailed(core, scope, token, creating, err);
  }
}

/** A create that failed or timed out: STORE_UNAVAILABLE, and the record it may have made (`creating`) is freed once it answers. */
function createFailed(
  core: LeasedCore,
  scope: IdempotencyScope,
  token: string,
  creating: Promise<CreateResult> | undefined,
  err: unknown,
): Error {
  if (creating) releaseUnanswered(core.store, core.observer, scope, token, creating);
  return storeUnavailable(core.observer, "create", err, scope);
}

/** A waiting duplicate's poll: a failure is STORE_UNAVAILABLE. */
async function getRecord(core: LeasedCore, scope: IdempotencyScope) {
  try {
    return await core.store.call("get", (target) => target.get(scope));
  } catch (err) {
    throw storeUnavailable(core.observer, "get", err, scope);
  }
}
