// PostgresStore on Kysely (PostgreSQL dialect), with transactions for executeInTransaction.
import type { CompiledQuery, Kysely, Transaction } from "kysely";
import type { SqlClient, TransactionalSqlClient } from "../postgres-store";

/**
 * @example
 * const store = new PostgresStore(kyselyClient(db));
 * await handler.executeInTransaction(context, (trx) => trx.insertInto("orders").values(order).execute());
 */
export function kyselyClient<DB>(db: Kysely<DB>): TransactionalSqlClient<Transaction<DB>> {
  return {
    ...on(db),
    transaction: (work) => db.transaction().execute((trx) => work(on(trx), trx)),
  };
}

function on<DB>(db: Kysely<DB>): SqlClient {
  return { query: async (text, params = []) => ({ rows: (await db.executeQuery(rawQuery(text, params))).rows }) };
}

/** What Kysely's `CompiledQuery.raw` builds, written out so this file imports only Kysely's types. */
function rawQuery(sql: string, parameters: readonly unknown[]): CompiledQuery<unknown> {
  return { sql, parameters, query: { kind: "RawNode", sqlFragments: [sql], parameters: [] }, queryId: { queryId: "idempotency-store" } };
}
