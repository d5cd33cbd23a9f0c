// PostgresStore on postgres.js (`postgres`), with transactions (`sql.begin`) for executeInTransaction.
import type { Sql, TransactionSql } from "postgres";
import type { SqlClient, TransactionalSqlClient } from "../postgres-store";

/**
 * @example
 * const sql = postgres(process.env.DATABASE_URL);
 * const store = new PostgresStore(postgresJsClient(sql));
 * await handler.executeInTransaction(context, async (tx) => tx`INSERT INTO orders ${tx(order)}`);
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- postgres.js's own default for its custom types.
export function postgresJsClient<Types extends Record<string, unknown> = {}>(sql: Sql<Types>): TransactionalSqlClient<TransactionSql<Types>> {
  return {
    ...on(sql),
    transaction: (work) => sql.begin((tx) => work(on(tx), tx)) as Promise<Awaited<ReturnType<typeof work>>>,
  };
}

function on<Types extends Record<string, unknown>>(sql: Sql<Types> | TransactionSql<Types>): SqlClient {
  // `unsafe` is postgres.js's call for SQL text with $n parameters; the store's text is fixed, its values are parameters.
  // `prepare: true` follows the client's own `prepare` option (on by default, off for PgBouncer), as its
  // tagged templates do: unprepared, postgres.js asks the parameter types first, a second round trip per statement.
  return { query: async (text, params = []) => ({ rows: await sql.unsafe(text, params as never[], { prepare: true }) }) };
}
