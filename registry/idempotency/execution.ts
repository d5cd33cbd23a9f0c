// One execution of an operation under a key: its fencing token, its lease, and how its outcome is written.
import type { BoundedStore } from "./bounded-store";
import type { Observer } from "./observer";
import type { OperationContext } from "./operation-context";
import { serializeResult, UnstorableResultError } from "./result-json";
import { StepLog, type Step } from "./steps";
import type { IdempotencyScope, IdempotencyStore, StepResults } from "./types";
import { sleep } from "./utils/with-timeout";

export class LeaseLostError extends Error {
  override readonly name = "LeaseLostError";
}

export type ExecutionSettings = {
  ttlMs: number;
  maxRetries: number;
  completionAttempts: number;
  heartbeatIntervalMs: number;
};

export type FailureOutcome = "permanent_failure" | "transient_failure" | "poisoned" | "uncaptured";

/** How the caller classifies what the operation threw (see ExecuteOptions). */
export type FailureClassifiers = {
  isPermanentError?: ((err: unknown) => boolean) | undefined;
  isUncapturable?: ((err: unknown) => boolean) | undefined;
  /** @deprecated Renamed `isUncapturable`. */
  isUnrecordable?: ((err: unknown) => boolean) | undefined;
  /** What to keep with a key this error marks FAILED (see ExecuteOptions). */
  failureResponse?: ((err: unknown) => unknown) | undefined;
};

/**
 * Renews the lease of every running execution of one handler from a single interval, rather than
 * a timer per execution (arming and clearing one cost more than the rest of a fresh request on
 * MemoryStore). An execution is renewed at the first tick after it starts, then every interval, so
 * it is never left longer than one interval without a renewal, as with a timer of its own. The
 * interval never keeps the process alive and stops at the first tick that finds nothing running.
 */
export class Leases {
  private readonly intervalMs: number;
  private readonly running = new Set<Execution>();
  private timer: ReturnType<typeof setInterval> | undefined;

  /** `intervalMs`: 0 (or less) turns the heartbeat off. */
  constructor(intervalMs: number) {
    this.intervalMs = intervalMs;
  }

  hold(execution: Execution): void {
    if (!(this.intervalMs > 0)) return;
    this.running.add(execution);
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.tick(), this.intervalMs);
      this.timer.unref?.();
    }
  }

  drop(execution: Execution): void {
    this.running.delete(execution);
  }

  private tick(): void {
    if (this.running.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    // `renew` never rejects: a failed renewal is logged by the execution itself.
    for (const execution of this.running) void execution.renew();
  }
}

/**
 * The execution that created a record under `token`: only it may write the record's outcome.
 * While the operation runs it renews the lease every `heartbeatIntervalMs`, so
 * `recoverStuckRecords` never mistakes a long execution for a crashed one (and pushes the expiry
 * `ttlMs` ahead, so one that outlasts the TTL never loses its key to a duplicate); `signal`
 * aborts when the record is taken over. It is also the operation's context (`ctx`), so a request
 * makes no second object for it.
 */
export class Execution implements OperationContext {
  readonly scope: IdempotencyScope;
  readonly token: string;
  private readonly store: BoundedStore;
  private readonly observer: Observer;
  private readonly settings: ExecutionSettings;
  private readonly leases: Leases;
  private controller: AbortController | undefined;
  /** A renewal is in flight: a slow store never gets a second one stacked on it. */
  private renewing = false;
  /** What `create` read of earlier attempts' steps (`undefined`: not read). */
  private readonly knownSteps: StepResults | undefined;
  private steps: StepLog | undefined;
  private boundStep: Step | undefined;

  constructor(
    store: BoundedStore,
    observer: Observer,
    settings: ExecutionSettings,
    leases: Leases,
    scope: IdempotencyScope,
    token: string,
    knownSteps?: StepResults,
  ) {
    this.store = store;
    this.leases = leases;
    this.observer = observer;
    this.settings = settings;
    this.scope = scope;
    this.token = token;
    this.knownSteps = knownSteps;
  }

  /**
   * The operation's `ctx.step(name, fn)`: runs `fn(stepKey)` and records its result before resolving,
   * or returns the result an earlier attempt of this key recorded, without calling `fn`. Bound, so
   * `{ step }` can be destructured; made when first read.
   */
  get step(): Step {
    this.boundStep ??= <T>(name: string, fn: (stepKey: string) => Promise<T> | T): Promise<T> => {
      const { store, scope, token, settings, knownSteps } = this;
      this.steps ??= new StepLog(store, scope, token, settings.ttlMs, knownSteps, () => this.loseLease());
      return this.steps.run(name, fn, this.controller?.signal);
    };
    return this.boundStep;
  }

  /** The operation's `ctx.key`. */
  get key(): IdempotencyScope {
    return this.scope;
  }

  /** Aborted when the record is no longer ours (recovered, or taken by another execution). Made when first asked for. */
  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    return this.controller.signal;
  }

  /** Starts renewing the lease; `stopLease` ends it once the operation settled. */
  holdLease(): void {
    this.leases.hold(this);
  }

  stopLease(): void {
    this.leases.drop(this);
  }

  /** One renewal of the lease (the handler's `Leases` calls it every interval): a lost record aborts `signal`. */
  async renew(): Promise<void> {
    if (this.renewing) return;
    this.renewing = true;
    try {
      const held = await this.store.call("heartbeat", (store) => store.heartbeat(this.scope, this.token, this.settings.ttlMs));
      if (!held && !this.controller?.signal.aborted) this.loseLease();
    } catch (err) {
      // One missed beat is survivable: recovery only fires after a whole timeout without any.
      this.observer.record("heartbeatFailed", this.scope, { err });
    } finally {
      this.renewing = false;
    }
  }

  /** The key is no longer ours: stop renewing, abort `signal`, and give the step that found out its error. */
  private loseLease(): Error {
    if (this.controller?.signal.aborted) return this.controller.signal.reason as Error;
    this.stopLease();
    this.observer.record("leaseLostDuringExecution", this.scope);
    this.controller ??= new AbortController();
    const lost = new LeaseLostError(
      `The idempotency record for key "${this.scope.key}" was taken over while its operation ran.`,
    );
    this.controller.abort(lost);
    return lost;
  }

  /**
   * A permanent error marks the key FAILED; a transient one counts a retry and frees the key, or
   * poisons it once `maxRetries` is reached; an uncapturable answer frees the key without counting.
   * If the store cannot be written, the record stays PROCESSING and `recoverStuckRecords` settles it
   * later; the caller still gets the original error.
   */
  async fail(err: unknown, classifiers: FailureClassifiers = {}): Promise<FailureOutcome> {
    const { scope, observer, settings, token } = this;
    // Not a failure at all: the answer went out, it just cannot be kept. Asked first, so no other classifier sees it.
    const uncaptured = this.classify(err, "isUncapturable", classifiers.isUncapturable ?? classifiers.isUnrecordable);
    const permanent = !uncaptured && (err instanceof UnstorableResultError || this.classify(err, "isPermanentError", classifiers.isPermanentError));
    try {
      if (uncaptured) {
        await this.held("release", (store) => store.release(scope, token));
        observer.record("uncaptured", scope, { err });
        return "uncaptured";
      }
      if (permanent) {
        await this.markFailed(err, classifiers);
        observer.record("permanentFailure", scope, { err });
        return "permanent_failure";
      }
      // The counter is not fenced: a stale execution (recovered, maybe re-run by another owner) must
      // not spend the key's budget. A held heartbeat also renews the lease for the writes below.
      if (!(await this.store.call("heartbeat", (store) => store.heartbeat(scope, token, settings.ttlMs)))) {
        observer.record("leaseLostFailureNotCounted", scope, { err });
        return "transient_failure";
      }
      const retryCount = await this.store.call("incrementRetryCount", (store) => store.incrementRetryCount(scope, settings.ttlMs));
      if (retryCount >= settings.maxRetries) {
        await this.markFailed(err, classifiers);
        observer.record("poisoned", scope, { retryCount, err });
        return "poisoned";
      }
      await this.held("release", (store) => store.release(scope, token));
      observer.record("transientFailure", scope, { retryCount, err });
      return "transient_failure";
    } catch (storeErr) {
      observer.record("failureNotRecorded", scope, { err: storeErr });
      return permanent ? "permanent_failure" : "transient_failure";
    }
  }

  /**
   * Writes the result, retrying store errors a few times. Returns the serialized result and whether
   * it was stored: an unrecorded success is logged and counted, and the caller still gets its result.
   * A result JSON cannot carry marks the key FAILED (the operation already ran) and is thrown.
   */
  async complete(result: unknown): Promise<{ serialized: string | null; recorded: boolean }> {
    const { scope, observer, settings } = this;
    let serialized: string | null;
    try {
      serialized = serializeResult(result);
    } catch (err) {
      await this.fail(err);
      throw err;
    }
    observer.count("executions", { operation: scope.operation, outcome: "success" });
    let failedBefore = false;
    for (let attempt = 1; attempt <= settings.completionAttempts; attempt++) {
      try {
        const stored = await this.store.call("markSuccess", (store) => store.markSuccess(scope, this.token, serialized, settings.ttlMs));
        // After a timed-out attempt the write may have landed anyway: then the record is ours and SUCCESS.
        if (stored || (failedBefore && (await this.alreadyStored()))) {
          observer.record("stored", scope);
          return { serialized, recorded: true };
        }
        observer.record("leaseLostResponseNotStored", scope);
        return { serialized, recorded: false };
      } catch (err) {
        failedBefore = true;
        observer.record("storingFailed", scope, { attempt, err });
        if (attempt < settings.completionAttempts) await sleep(50 * 2 ** (attempt - 1));
      }
    }
    observer.record("unrecorded", scope);
    return { serialized, recorded: false };
  }

  private async markFailed(err: unknown, classifiers: FailureClassifiers): Promise<void> {
    const kept = keptFailureResponse(this.observer, this.scope, err, classifiers.failureResponse);
    await this.held("markFailed", (store) => store.markFailed(this.scope, this.token, this.settings.ttlMs, kept));
  }

  private classify(err: unknown, name: keyof FailureClassifiers, classifier?: (err: unknown) => boolean): boolean {
    return classifies(this.observer, this.scope, err, name, classifier);
  }

  private async alreadyStored(): Promise<boolean> {
    try {
      const record = await this.store.call("get", (store) => store.get(this.scope));
      return record?.token === this.token && record.status === "SUCCESS";
    } catch {
      return false;
    }
  }

  private async held(method: "release" | "markFailed", write: (store: IdempotencyStore) => Promise<boolean>): Promise<void> {
    if (!(await this.store.call(method, write))) this.observer.record(method === "release" ? "leaseLostReleaseSkipped" : "leaseLostMarkFailedSkipped", this.scope);
  }
}

/**
 * The serialized answer to keep with a failed key (both `execute` and `executeInTransaction` use it);
 * a keeper that throws keeps nothing rather than lose the failure.
 */
export function keptFailureResponse(observer: Observer, scope: IdempotencyScope, err: unknown, failureResponse?: (err: unknown) => unknown): string | null {
  if (!failureResponse) return null;
  try {
    return serializeResult(failureResponse(err));
  } catch (keeperErr) {
    observer.record("failureResponseThrew", scope, { err: keeperErr });
    return null;
  }
}

/** Asks a user's classifier about an error; one that throws is logged and answers false (the failure stays transient). */
export function classifies(observer: Observer, scope: IdempotencyScope, err: unknown, name: keyof FailureClassifiers, classifier?: (err: unknown) => boolean): boolean {
  if (!classifier) return false;
  try {
    return classifier(err) === true;
  } catch (classifierErr) {
    observer.record(name === "isUncapturable" ? "isUncapturableThrew" : "isPermanentErrorThrew", scope, { err: classifierErr });
    return false;
  }
}
