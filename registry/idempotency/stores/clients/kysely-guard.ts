// Kysely's transaction behind the transaction guard, and the store's SQL as a compiled query: shared by the PostgreSQL and MySQL adapters.
import type { CompiledQuery, KyselyPlugin, QueryExecutor, Transaction } from "kysely";
import { guardObject, refusedMember, refuseTransactionControl } from "./transaction-guard";

/**
 * `trx` behind the guard: raw SQL (`` sql`...`.execute(trx) ``, `trx.executeQuery`) that would end the
 * transaction is refused (for MySQL, its DDL too, which commits it), as is `startTransaction`; Kysely
 * itself refuses `transaction`, `connection` and `destroy` on a transaction.
 */
export function guardedKysely<DB>(trx: Transaction<DB>, dialect: "postgres" | "mysql"): Transaction<DB> {
  const own = trx.getExecutor();
  const executor: QueryExecutor = guardObject(own, {
    executeQuery: (query: CompiledQuery) => (refuseTransactionControl(query.sql, dialect), own.executeQuery(query)),
  });
  return guardObject(trx, {
    getExecutor: () => executor,
    executeQuery: (query: CompiledQuery | { compile(): CompiledQuery }) =>
      executor.executeQuery("compile" in query ? query.compile() : query),
    startTransaction: refusedMember("startTransaction"),
    // The same transaction under another schema or plugins is guarded too.
    withPlugin: (plugin: KyselyPlugin) => guardedKysely(trx.withPlugin(plugin), dialect),
    withoutPlugins: () => guardedKysely(trx.withoutPlugins(), dialect),
    withSchema: (schema: string) => guardedKysely(trx.withSchema(schema), dialect),
    withTables: () => guardedKysely(trx.withTables(), dialect),
  });
}

/** What Kysely's `CompiledQuery.raw` builds, written out so the adapters import only Kysely's types. */
export function kyselyRawQuery(sql: string, parameters: readonly unknown[]): CompiledQuery<unknown> {
  return {
    sql,
    parameters,
    query: { kind: "RawNode", sqlFragments: [sql], parameters: [] },
    queryId: { queryId: "idempotency-store" },
  };
}
