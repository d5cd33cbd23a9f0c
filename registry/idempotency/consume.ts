// The inbox: an at-least-once delivery (webhook, queue message, job) runs once per (source, message id).
import { IdempotencyError, isIdempotencyError } from "./errors";
import type { RunReport } from "./failure-policy";
import type { Observer } from "./observer";
import { isIdempotencyKey } from "./scope";
import type { ExecuteResult, IdempotencyScope } from "./types";

/** One delivery: `source` names the sender or queue ("stripe", "orders"), `messageId` its id there. */
export type InboxMessage<P = unknown> = {
  source: string;
  messageId: string;
  /** Fingerprinted: the same id with another payload is a conflict and runs nothing. */
  payload: P;
};

/**
 * Called once when a message is dead (its operation failed permanently, or spent `maxRetries`),
 * before it is acknowledged. Once means: by the delivery that killed it, and again only if that
 * delivery crashed before `onDead` resolved (then by the next delivery, with a REQUEST_FAILED
 * IdempotencyError as `error`): at least once, never twice after one resolved.
 */
export type OnDead<P = unknown> = (message: InboxMessage<P>, error: unknown) => Promise<void> | void;

/** `Options`: what `execute` (or `executeInTransaction`) takes, passed on unchanged (`isPermanentError`, `waitMs`...). */
export type ConsumeOptions<Options, P = unknown> = Options & { onDead?: OnDead<P> | undefined };

/**
 * `processed`: the operation ran now. `duplicate`: it ran before; `response` is its stored result.
 * `dead`: it failed for good, now or before (`onDead` was called for it); acknowledge it.
 */
export type ConsumeResult<T> =
  { outcome: "processed" | "duplicate"; response: T } | { outcome: "dead"; error: unknown };

/** What `consume` needs of the handler. */
export type InboxCore = {
  observer: Observer;
  /** `execute`, for the record that `onDead` resolved. */
  notify: (scope: IdempotencyScope, operation: () => Promise<null>) => Promise<unknown>;
};

/** `execute` or `executeInTransaction` of the user's operation, filling in `report` as it runs. */
export type RunMessage<T, Options> = (
  scope: IdempotencyScope,
  options: Options,
  report: RunReport,
) => Promise<ExecuteResult<T>>;

/**
 * Every consumer scope's operation starts with this; an HTTP operation never does (the default
 * `"<METHOD> <path>"` has a space before any colon, and a route's own `getOperation` returning it
 * is refused), so a message id can never replay or block an HTTP request's key, nor the reverse.
 */
export const CONSUMER_OPERATION_PREFIX = "consume:";
/** The userId of every consumer scope: messages have no user, the source already separates senders. */
export const INBOX_USER_ID = "inbox";
const SOURCE = /^[A-Za-z0-9._-]{1,64}$/;

/** A source names one sender or queue: checked when an adapter is made, so a typo fails at startup. */
export function checkSource(source: unknown): string {
  if (typeof source !== "string" || !SOURCE.test(source)) {
    throw new TypeError(
      `idempotency: a message \`source\` must be 1 to 64 letters, digits, '.', '_' or '-' (e.g. "stripe"), got ${JSON.stringify(source)}.`,
    );
  }
  return source;
}

/** The scope a message's id is kept under. */
export function inboxScope(source: string, messageId: string): IdempotencyScope {
  return { operation: `${CONSUMER_OPERATION_PREFIX}${source}`, userId: INBOX_USER_ID, key: messageId };
}

/** Where the fact "onDead resolved for this message" is kept: a scope of its own, so it is recorded once. */
function deadNoticeScope(scope: IdempotencyScope): IdempotencyScope {
  return { ...scope, operation: `${scope.operation}:onDead` };
}

/**
 * Runs `operation` once per message. Resolves `processed`, `duplicate` or `dead` (acknowledge all
 * three); rejects when the message should come again: the operation's own transient error, or
 * REQUEST_IN_PROGRESS / STORE_UNAVAILABLE. Rejects with IDEMPOTENCY_KEY_INVALID (a missing or
 * malformed id), IDEMPOTENCY_PAYLOAD_INVALID or KEY_REUSED_WITH_DIFFERENT_REQUEST (the id came with
 * another payload; logged and counted as a conflict) when no delivery of it can ever run: an
 * adapter rejects those without redelivery (see `isRefusedDelivery`).
 */
export async function consumeMessage<T, Options>(
  core: InboxCore,
  message: InboxMessage,
  run: RunMessage<T, Options>,
  options: ConsumeOptions<Options>,
): Promise<ConsumeResult<T>> {
  const scope = checkMessage(core.observer, message);
  const { onDead, ...executeOptions } = options;
  const report: RunReport = { ran: false, dead: false };
  try {
    const { response, replayed } = await run(scope, executeOptions as Options, report);
    return replayed ? { outcome: "duplicate", response } : { outcome: "processed", response };
  } catch (err) {
    // Dead once this delivery's failure left the key FAILED (permanent, or the last of its budget), as the
    // failure path reports it: no second read. A FAILED mark the store did not take means redelivery.
    const dead = report.ran ? report.dead : isIdempotencyError(err) && err.code === "REQUEST_FAILED";
    if (!dead) throw err;
    await bury(core, scope, message, err, report.ran, onDead);
    return { outcome: "dead", error: err };
  }
}

/** Hands a dead message to `onDead` under a notice record of its own, so no second delivery calls it again. */
async function bury(
  core: InboxCore,
  scope: IdempotencyScope,
  message: InboxMessage,
  error: unknown,
  killed: boolean,
  onDead?: OnDead,
): Promise<void> {
  if (!onDead) {
    if (killed) core.observer.record("messageDead", scope, { err: error });
    return;
  }
  try {
    await core.notify(deadNoticeScope(scope), async () => {
      core.observer.record("messageDead", scope, { err: error });
      await onDead(message, error);
      return null;
    });
  } catch (err) {
    // Another delivery is calling onDead right now: it owns the notice, this one is acknowledged.
    if (isIdempotencyError(err) && err.code === "REQUEST_IN_PROGRESS") return;
    // onDead failed every time the budget allowed: acknowledge rather than redeliver forever.
    if (isIdempotencyError(err) && err.code === "REQUEST_FAILED") {
      core.observer.record("onDeadGaveUp", scope, { err });
      return;
    }
    throw err;
  }
}

function checkMessage(observer: Observer, message: InboxMessage): IdempotencyScope {
  if (typeof message !== "object" || message === null)
    throw new TypeError("idempotency: consume takes a message `{ source, messageId, payload }`.");
  const source = checkSource(message.source);
  if (!isIdempotencyKey(message.messageId)) {
    const err = new IdempotencyError(
      "IDEMPOTENCY_KEY_INVALID",
      `A ${source} message's id must be 1 to 255 visible ASCII characters (got ${describe(message.messageId)}); it cannot be deduplicated, so it was not run.`,
    );
    observer.record(
      "messageIdInvalid",
      { operation: `${CONSUMER_OPERATION_PREFIX}${source}`, userId: INBOX_USER_ID, key: "" },
      { err },
    );
    throw err;
  }
  return inboxScope(source, message.messageId);
}

function describe(value: unknown): string {
  if (typeof value !== "string") return value === undefined ? "no id" : typeof value;
  return value === "" ? "an empty string" : `${value.length} characters`;
}
