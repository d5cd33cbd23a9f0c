// The one argument every operation receives (`execute`, `executeInTransaction`, every adapter's `run`), and the operations' types.
import type { Step } from "./steps";
import type { IdempotencyScope } from "./types";

/**
 * What an operation may read about the execution it runs in. One object rather than positional
 * arguments, so a field added later never moves another.
 */
type ExecutionContext = {
  /**
   * Aborts when the key is no longer this execution's (its record was recovered or taken over), or
   * when `timeoutMs` passes in transactional mode. Made on first read: an operation that never
   * reads it costs no AbortController.
   */
  readonly signal: AbortSignal;
  /** The scope this execution holds: operation, user and Idempotency-Key. */
  readonly key: IdempotencyScope;
};

/**
 * What `execute`'s operation receives: also `step(name, fn)`, a recovery point around one external
 * call. Not in transactional mode, whose writes commit or roll back with the record as one.
 *
 * @example
 * await handler.execute(scope, async ({ step }) => {
 *   const charge = await step("charge", (stepKey) => psp.charge(amount, { idempotencyKey: stepKey }));
 *   await step("receipt", () => mailer.send(receiptFor(charge)));
 *   return { chargeId: charge.id };
 * });
 */
export type OperationContext = ExecutionContext & {
  /**
   * Runs `fn(stepKey)` and records its result (JSON) before resolving; a later attempt of the same
   * key gets the recorded result without calling `fn`. Pass `stepKey` on as the downstream's
   * idempotency key, so the one call in flight at a crash is deduplicated there too.
   */
  readonly step: Step;
};

/**
 * What `executeInTransaction`'s operation receives: also `tx`, the client's own transaction, whose
 * writes commit with the idempotency record.
 *
 * @example
 * await handler.executeInTransaction(scope, async ({ tx }) => tx.query("INSERT INTO orders ..."));
 */
export type TransactionContext<Tx> = ExecutionContext & {
  readonly tx: Tx;
};

/** The operation `execute` runs: `ctx.signal` aborts if its record is taken over while it runs. */
export type IdempotentOperation<T> = (ctx: OperationContext) => Promise<T> | T;

/** The operation `executeInTransaction` runs: `ctx.tx`, the client's own transaction object, and `ctx.signal`, which aborts when `timeoutMs` passes. */
export type TransactionalOperation<T, Tx> = (ctx: TransactionContext<Tx>) => Promise<T> | T;
