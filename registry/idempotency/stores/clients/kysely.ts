// PostgresStore on Kysely (PostgreSQL dialect), with transactions for executeInTransaction.
import type { Kysely, Transaction } from "kysely";
import type { SqlClient, TransactionalSqlClient } from "../postgres-store";
import { guardedKysely, kyselyRawQuery } from "./kysely-guard";

/**
 * The operation gets Kysely's `trx` behind the transaction guard: raw SQL (`` sql`...`.execute(trx) ``,
 * `trx.executeQuery`) that would end the transaction is refused, as is `startTransaction`; Kysely
 * itself refuses `transaction`, `connection` and `destroy` on a transaction.
 *
 * @example
 * const store = new PostgresStore(kyselyClient(db));
 * await handler.executeInTransaction(scope, ({ tx: trx }) => trx.insertInto("orders").values(order).execute());
 */
export function kyselyClient<DB>(db: Kysely<DB>): TransactionalSqlClient<Transaction<DB>> {
  return {
    ...on(db),
    transaction: (work) => db.transaction().execute((trx) => work(on(trx), guardedKysely(trx, "postgres"))),
  };
}

function on<DB>(db: Kysely<DB>): SqlClient {
  return { query: async (text, params = []) => ({ rows: (await db.executeQuery(kyselyRawQuery(text, params))).rows }) };
}
