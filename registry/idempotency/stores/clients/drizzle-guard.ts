// Drizzle's transaction behind the transaction guard, and the store's SQL in Drizzle's shape: shared by the PostgreSQL and MySQL adapters.
import type { SQLWrapper } from "drizzle-orm";
import { guardObject, refusedMember, refusedObject, refuseTransactionControl } from "./transaction-guard";

/** What the adapters use of a Drizzle database: `execute` and `transaction`. */
export type DrizzleDatabase = {
  execute(query: SQLWrapper): PromiseLike<unknown>;
  /** The driver Drizzle was built on (a pg Pool or Client, a postgres.js `sql`, a PGlite, a mysql2 Pool or Connection). */
  $client?: unknown;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any Drizzle transaction; DrizzleTransaction<Db> recovers its type.
  transaction<T>(work: (tx: any) => Promise<T>): Promise<T>;
};

/**
 * The `tx` Drizzle hands to `db.transaction(async (tx) => ...)`, behind the transaction guard: `execute`
 * refuses text that ends the transaction, `setTransaction` is refused, nested `transaction`s (savepoints)
 * are guarded too. `tx.rollback()` stays: it throws, and the record rolls back with your writes.
 */
export type DrizzleTransaction<Db extends DrizzleDatabase> = Parameters<Parameters<Db["transaction"]>[0]>[0];

/** Drizzle's own members the guard needs: how it turns a query into text, and its nested transactions. */
type DrizzleInternals = {
  dialect: { sqlToQuery(sql: unknown): { sql: string } };
  transaction(work: (tx: object) => Promise<unknown>, config?: unknown): Promise<unknown>;
};

/** `tx` behind the guard; `dialect` says which statements end a transaction (MySQL's DDL commits it too). */
export function guardedDrizzle<Tx extends object>(tx: Tx, dialect: "postgres" | "mysql"): Tx {
  const internals = tx as unknown as DrizzleInternals & Pick<DrizzleDatabase, "execute">;
  return guardObject(tx, {
    execute(query: SQLWrapper | string) {
      refuseTransactionControl(
        typeof query === "string" ? query : internals.dialect.sqlToQuery(query.getSQL()).sql,
        dialect,
      );
      return internals.execute(query as SQLWrapper);
    },
    transaction: (work: (tx: object) => Promise<unknown>, config?: unknown) =>
      internals.transaction((nested) => work(guardedDrizzle(nested, dialect)), config),
    setTransaction: refusedMember("setTransaction"),
    // The session holds the connection (`tx.session.client.release()`).
    session: refusedObject("session"),
  });
}

/**
 * The store's SQL text and its parameters as Drizzle sends them (what `sql` builds, reduced to the one
 * method `execute` calls), so the adapters import only Drizzle's types.
 */
export function drizzleRawQuery(sql: string, params: unknown[]): SQLWrapper {
  const query = { toQuery: () => ({ sql, params }) };
  return { getSQL: () => query } as unknown as SQLWrapper;
}
