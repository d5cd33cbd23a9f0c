// What every wiring test checks, whatever the store: one run per key (in a transaction too), maintenance, a clean close.
import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import type { IdempotencySetup } from "../compose";

/**
 * @example
 * await checkWiring(composeIdempotency(database, { db, redis: null }), { transactions: true });
 */
export async function checkWiring<Tx>(
  idempotency: IdempotencySetup<Tx>,
  options: { transactions: boolean },
): Promise<void> {
  let runs = 0;
  const scope = { operation: "payments:create", userId: "u_1", key: randomUUID(), payload: { amount: 100 } };
  const first = await idempotency.handler.execute(scope, () => ({ id: ++runs }));
  const retry = await idempotency.handler.execute(scope, () => ({ id: ++runs }));
  expect(retry).toEqual({ response: first.response, replayed: true });
  if (options.transactions) {
    // The record, the operation's writes (none here) and the result commit in one transaction.
    const order = { ...scope, key: randomUUID() };
    const committed = await idempotency.handler.executeInTransaction(order, () => ({ id: ++runs }));
    const replay = await idempotency.handler.executeInTransaction(order, () => ({ id: ++runs }));
    expect(replay).toEqual({ response: committed.response, replayed: true });
  }
  expect(runs).toBe(options.transactions ? 2 : 1);
  await idempotency.runMaintenanceOnce();
  await idempotency.close();
}
