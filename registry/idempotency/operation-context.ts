// The one argument every operation receives: `execute`, `executeInTransaction` and every adapter's `run`.
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
 * What `execute`'s operation receives. (Recovery points, `step(name, fn)`, will join here: outside
 * transactional mode only, where a crash can leave an external call half done.)
 *
 * @example
 * await handler.execute(scope, async (ctx) => chargeCard(amount, { signal: ctx.signal }));
 */
export type OperationContext = ExecutionContext;

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
