// PostgresStore on Kysely (PostgreSQL dialect), with transactions for executeInTransaction.
import type { CompiledQuery, Kysely, QueryExecutor, Transaction } from "kysely";
import type { SqlClient, TransactionalSqlClient } from "../postgres-store";
import { guardObject, refusedMember, refuseTransactionControl } from "./transaction-guard";

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
    transaction: (work) => db.transaction().execute((trx) => work(on(trx), guarded(trx))),
  };
}

function on<DB>(db: Kysely<DB>): SqlClient {
  return { query: async (text, params = []) => ({ rows: (await db.executeQuery(rawQuery(text, params))).rows }) };
}

function guarded<DB>(trx: Transaction<DB>): Transaction<DB> {
  const own = trx.getExecutor();
  const executor: QueryExecutor = guardObject(own, {
    executeQuery: (query: CompiledQuery) => (refuseTransactionControl(query.sql), own.executeQuery(query)),
  });
  // The same transaction under another schema or plugins is guarded too.
  const derived = (name: "withPlugin" | "withoutPlugins" | "withSchema" | "withTables") => (...args: unknown[]) =>
    guarded((trx[name] as (...args: unknown[]) => Transaction<DB>).apply(trx, args));
  return guardObject(trx, {
    getExecutor: () => executor,
    executeQuery: (query: CompiledQuery | { compile(): CompiledQuery }) => executor.executeQuery("compile" in query ? query.compile() : query),
    startTransaction: refusedMember("startTransaction"),
    withPlugin: derived("withPlugin"),
    withoutPlugins: derived("withoutPlugins"),
    withSchema: derived("withSchema"),
    withTables: derived("withTables"),
  });
}

/** What Kysely's `CompiledQuery.raw` builds, written out so this file imports only Kysely's types. */
function rawQuery(sql: string, parameters: readonly unknown[]): CompiledQuery<unknown> {
  return { sql, parameters, query: { kind: "RawNode", sqlFragments: [sql], parameters: [] }, queryId: { queryId: "idempotency-store" } };
}
