// `transaction: true`, checked when a route is created: a route that asks for it gets it, or the app does not start.

/** What the check needs of the handler: whether its store can open a transaction of the user's client. */
export type TransactionCapable = { readonly supportsTransactions: boolean };

/**
 * Refuses, at start-up, a `transaction: true` the route could not keep, rather than run its writes
 * outside the record's transaction while the log says they committed together:
 * - `capture` names a capture-style middleware: it runs an ordinary route it cannot hand `ctx.tx`;
 * - a handler whose store has no transaction of the user's client (MemoryStore, RedisStore, a
 *   PostgresStore on a bare Pool);
 * - `requireKey: false`: a request without a key would run with no record and no transaction;
 * - `waitMs`: its duplicates wait on the record's row lock, not by polling.
 * Returns whether the route runs in transactional mode.
 *
 * @example
 * const inTransaction = checkTransaction(options, handler, "Koa's idempotency() middleware");
 */
export function checkTransaction(
  options: { transaction?: unknown; requireKey?: unknown; waitMs?: unknown },
  handler: TransactionCapable,
  capture?: string,
): boolean {
  const { transaction } = options;
  if (transaction === undefined || transaction === false) return false;
  if (transaction !== true)
    throw new TypeError(`idempotency: \`transaction\` must be true or false, got ${JSON.stringify(transaction)}.`);
  if (capture !== undefined) {
    throw new TypeError(
      `idempotency: ${capture} cannot take \`transaction: true\`: it runs an ordinary route, which it cannot hand the transaction (ctx.tx), so the route's writes would commit apart from the record. Use the wrapper style, idempotent(handler, { transaction: true, run }).`,
    );
  }
  if (!handler.supportsTransactions) {
    throw new TypeError(
      "idempotency: `transaction: true` needs a handler whose store runs transactions of your database client: new IdempotencyHandler(new PostgresStore(pgClient(pool))) or another adapter from stores/clients/ (MemoryStore, RedisStore, DynamoDbStore and a PostgresStore on a bare Pool have none).",
    );
  }
  if (options.requireKey === false) {
    throw new TypeError(
      "idempotency: `transaction: true` with `requireKey: false`: a request without a key would run with no record and no transaction. Drop `requireKey` (transactional routes require the key).",
    );
  }
  if (options.waitMs !== undefined) {
    throw new TypeError(
      "idempotency: `transaction: true` with `waitMs`: a transactional route's duplicate already waits for the first request, on the record's row lock (up to 2 s), and then replays it. Drop `waitMs` from this route.",
    );
  }
  return true;
}
