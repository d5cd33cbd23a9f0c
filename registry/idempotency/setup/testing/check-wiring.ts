// What every wiring test checks, whatever the store: one run per key (in a transaction too), maintenance, a clean close.
import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import { composeIdempotency } from "../compose";
import type { DatabaseVariant } from "../variants";

/**
 * Composes the wiring on the app's own `db`, as `createIdempotency({ db })` does, and checks it; `close()` must
 * leave that client open (it is the app's), so it is ended here afterwards, the way the app would.
 *
 * @example
 * await checkWiring(database, db, { transactions: true });
 */
export async function checkWiring<Db, Tx>(
  database: DatabaseVariant<Db, Tx>,
  db: Db,
  options: { transactions: boolean },
): Promise<void> {
  const idempotency = composeIdempotency(database, { db, redis: null });
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
  // The app's client still answers after the wiring closed; then the app closes it.
  const opened = database.openDatabase(db);
  expect(await opened.store.get(scope)).toMatchObject({ status: "SUCCESS" });
  await opened.end();
}
