// An answer the operation hands back that its key must not keep as the result: returned, not thrown, so the core settles the key from a value.
import type { Failure, FailureKind, RunReport } from "./failure-policy";
import { keptFailureResponse } from "./failure-policy";
import type { Observer } from "./observer";
import type { IdempotencyScope } from "./types";

/**
 * What an operation returns when its answer must go back to the caller but is not the key's result
 * (an HTTP route that answered 402, or streamed its response). `kind` says how the key settles:
 * - `"uncaptured"`: the answer went out and cannot be kept: the key is freed, no retry is spent;
 * - `"permanent"`: it can never succeed: the key is marked FAILED and keeps `failureResponse`;
 * - `"transient"`: a retry may succeed: one retry is spent and the key freed (FAILED, keeping
 *   `failureResponse`, once the budget is spent).
 * `execute` and `executeInTransaction` resolve `{ response: <this object>, replayed: false }` (the
 * transaction's writes roll back); the log lines name `reason`.
 *
 * @example
 * const answer = await charge(req.body);
 * if (answer.status === 402)
 *   return new UnkeptAnswer(answer, "permanent", { name: "CardDeclined", message: answer.body.code }, answer);
 * return answer;
 */
export class UnkeptAnswer<A> {
  readonly answer: A;
  readonly kind: FailureKind;
  /** What the log lines show of it, as they show an error: no stack, nothing else it carries. */
  readonly reason: { name: string; message: string };
  /** Kept with a key this answer marks FAILED (JSON-safe): later calls get it as REQUEST_FAILED's `response`. */
  readonly failureResponse: unknown;

  constructor(answer: A, kind: FailureKind, reason: { name: string; message: string }, failureResponse?: unknown) {
    this.answer = answer;
    this.kind = kind;
    this.reason = reason;
    this.failureResponse = failureResponse;
  }
}

/** The failure policy's view of an unkept answer (see settleFailure): its kind is decided, not classified. */
export function unkeptFailure(
  observer: Observer,
  scope: IdempotencyScope,
  unkept: UnkeptAnswer<unknown>,
  report: RunReport | undefined,
  lastAttempt: boolean | undefined,
): Failure {
  return {
    err: unkept.reason,
    kind: unkept.kind,
    kept: () =>
      unkept.failureResponse === undefined
        ? null
        : keptFailureResponse(observer, scope, unkept, () => unkept.failureResponse),
    report,
    lastAttempt,
  };
}
