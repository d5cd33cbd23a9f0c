// PostgresStore on PGlite (embedded PostgreSQL), with transactions for executeInTransaction.
import type { PGlite, Transaction } from "@electric-sql/pglite";
import type { TransactionalSqlClient } from "../postgres-store";

/**
 * PGlite runs one statement at a time: a transaction holds the whole database until it commits, so a
 * duplicate simply waits for it (within the handler's store timeout).
 *
 * @example
 * const store = new PostgresStore(pgliteClient(new PGlite("./data")));
 */
export function pgliteClient(db: PGlite): TransactionalSqlClient<Transaction> {
  return {
    query: (text, params) => db.query(text, params),
    transaction: (work) => db.transaction((tx) => work({ query: (text, params) => tx.query(text, params) }, tx)),
  };
}
