// One execution of an operation under a key: its fencing token, its lease, and how its outcome is written.
import type { BoundedStore } from "./bounded-store";
import {
  classifyFailure,
  keptFailureResponse,
  LEASED,
  settleFailure,
  type Failure,
  type FailureClassifiers,
  type FailureOutcome,
  type RunReport,
} from "./failure-policy";
import type { Observer } from "./observer";
import type { OperationContext } from "./operation-context";
import { serializeResult } from "./result-json";
import { StepLog, type Step } from "./steps";
import type { IdempotencyScope, IdempotencyStore, StepResults } from "./types";
import { sleep } from "./utils/time-limit";

export class LeaseLostError extends Error {
  override readonly name = "LeaseLostError";
}

export type ExecutionSettings = {
  ttlMs: number;
  maxRetries: number;
  completionAttempts: number;
  heartbeatIntervalMs: number;
};

/**
 * Renews the lease of every running execution of one handler from a single interval, rather than
 * a timer per execution (arming and clearing one cost more than the rest of a fresh request on
 * MemoryStore). An execution is renewed at the first tick after it starts, then every interval, so
 * it is never left longer than one interval without a renewal, as with a timer of its own. The
 * interval never keeps the process alive and stops at the first tick that finds nothing running.
 * The running executions sit in an array, each knowing its slot: holding and dropping one (every
 * request does both) is a push and a swap, with no hashing and no Set entry made and deleted.
 */
export class Leases {
  private readonly intervalMs: number;
  private readonly running: Execution[] = [];
  private timer: ReturnType<typeof setInterval> | undefined;

  /** `intervalMs`: 0 (or less) turns the heartbeat off. */
  constructor(intervalMs: number) {
    this.intervalMs = intervalMs;
  }

  hold(execution: Execution): void {
    if (!(this.intervalMs > 0) || execution.leaseSlot !== -1) return;
    execution.leaseSlot = this.running.push(execution) - 1;
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.tick(), this.intervalMs);
      this.timer.unref?.();
    }
  }

  drop(execution: Execution): void {
    const slot = execution.leaseSlot;
    if (slot === -1) return;
    execution.leaseSlot = -1;
    const last = this.running.pop() as Execution;
    if (last === execution) return;
    this.running[slot] = last;
    last.leaseSlot = slot;
  }

  private tick(): void {
    if (this.running.length === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    // `renew` never rejects: a failed renewal is logged by the execution itself. A copy: a renewal
    // that finds its lease lost drops its execution, which moves another into its slot.
    for (const execution of [...this.running]) void execution.renew();
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
  /** Where `Leases` keeps this execution while its lease is held; -1 when it is not. */
  leaseSlot = -1;
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
      const held = await this.store.call("heartbeat", (store) =>
        store.heartbeat(this.scope, this.token, this.settings.ttlMs),
      );
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
   * Settles what the operation threw under this execution's lease (see settleFailure): the record is
   * released, marked FAILED or left PROCESSING for recovery; `report` learns whether the key is dead.
   */
  fail(err: unknown, classifiers: FailureClassifiers = {}, report?: RunReport): Promise<FailureOutcome> {
    const { scope, observer } = this;
    return this.settle({
      err,
      kind: classifyFailure(observer, scope, err, classifiers),
      kept: () => keptFailureResponse(observer, scope, err, classifiers.failureResponse),
      report,
      lastAttempt: classifiers.lastAttempt,
    });
  }

  /** Settles a failure whose kind is known (a thrown error once classified, or an UnkeptAnswer) under this lease. */
  settle(failure: Failure): Promise<FailureOutcome> {
    const { scope, observer, store, settings } = this;
    return settleFailure({ store, observer, settings }, scope, failure, this, LEASED);
  }

  /** Whether the lease is still ours (renewing it): a failure of a stale execution must not spend the key's budget. */
  ownsKey(): Promise<boolean> {
    return this.store.call("heartbeat", (store) => store.heartbeat(this.scope, this.token, this.settings.ttlMs));
  }

  free(): Promise<boolean> {
    return this.held("release", (store) => store.release(this.scope, this.token));
  }

  markFailed(kept: string | null): Promise<boolean> {
    return this.held("markFailed", (store) => store.markFailed(this.scope, this.token, this.settings.ttlMs, kept));
  }

  /**
   * Writes the result, retrying store errors a few times. Returns the serialized result and whether
   * it was stored: an unrecorded success is logged and counted, and the caller still gets its result.
   * A result JSON cannot carry marks the key FAILED (the operation already ran) and is thrown.
   */
  async complete(result: unknown, report?: RunReport): Promise<{ serialized: string | null; recorded: boolean }> {
    const { scope, observer, settings } = this;
    let serialized: string | null;
    try {
      serialized = serializeResult(result);
    } catch (err) {
      await this.fail(err, {}, report);
      throw err;
    }
    if (observer.counting) observer.count("executions", { operation: scope.operation, outcome: "success" });
    let failedBefore = false;
    for (let attempt = 1; attempt <= settings.completionAttempts; attempt++) {
      try {
        const stored = await this.store.call("markSuccess", (store) =>
          store.markSuccess(scope, this.token, serialized, settings.ttlMs),
        );
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

  private async alreadyStored(): Promise<boolean> {
    try {
      const record = await this.store.call("get", (store) => store.get(this.scope));
      return record?.token === this.token && record.status === "SUCCESS";
    } catch {
      return false;
    }
  }

  /** A write fenced by the token: false (logged) when the key is no longer this execution's. */
  private async held(
    method: "release" | "markFailed",
    write: (store: IdempotencyStore) => Promise<boolean>,
  ): Promise<boolean> {
    const done = await this.store.call(method, write);
    if (!done)
      this.observer.record(method === "release" ? "leaseLostReleaseSkipped" : "leaseLostMarkFailedSkipped", this.scope);
    return done;
  }
}
