// PostgresStore on Drizzle ORM (over node-postgres or postgres.js), with transactions for executeInTransaction.
import type { SQLWrapper } from "drizzle-orm";
import type { SqlClient, TransactionalSqlClient } from "../postgres-store";
import { guardObject, refusedMember, refusedObject, refuseTransactionControl } from "./transaction-guard";

/** What the adapter uses of a Drizzle PostgreSQL database: `execute` and `transaction`. */
type DrizzleDatabase = {
  execute(query: SQLWrapper): PromiseLike<unknown>;
  /** The driver Drizzle was built on (a pg Pool or Client, a postgres.js `sql`, a PGlite). */
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

/**
 * @example
 * const db = drizzle(pool); // or drizzle(postgres(url))
 * const store = new PostgresStore(drizzleClient(db));
 * await handler.executeInTransaction(scope, ({ tx }) => tx.insert(orders).values(order));
 */
export function drizzleClient<Db extends DrizzleDatabase>(db: Db): TransactionalSqlClient<DrizzleTransaction<Db>> {
  return {
    ...(driverClient(db.$client) ?? on(db)),
    transaction: (work) => db.transaction((tx: DrizzleTransaction<Db>) => work(on(tx as DrizzleDatabase), guarded(tx))),
  };
}

/**
 * Outside a transaction the store's statements go to the driver itself, not through `db.execute`: Drizzle
 * sends raw SQL over postgres.js unprepared, which costs postgres.js a second round trip per statement
 * (it asks for the parameter types first). Drizzle's query logger does not see them.
 */
function driverClient(driver: unknown): SqlClient | undefined {
  if (typeof driver !== "object" && typeof driver !== "function") return undefined;
  const { unsafe, query } = (driver ?? {}) as {
    unsafe?: (text: string, params: unknown[], options: { prepare: boolean }) => Promise<unknown[]>;
    query?: (text: string, params?: unknown[]) => Promise<{ rows: unknown[] }>;
  };
  // postgres.js; `prepare: true` follows its own `prepare` option (off for PgBouncer), as in ./postgres-js.ts.
  if (typeof unsafe === "function") return { query: async (text, params = []) => ({ rows: await unsafe.call(driver, text, params, { prepare: true }) }) };
  // A pg Pool or Client, or PGlite: the same query(text, params) the store takes.
  if (typeof query === "function") return { query: (text, params) => query.call(driver, text, params) };
  return undefined;
}

function on(db: Pick<DrizzleDatabase, "execute">): SqlClient {
  return {
    async query(text, params = []) {
      const result = await db.execute(rawQuery(text, params));
      // node-postgres answers a result with `rows`; postgres.js answers the rows themselves.
      return { rows: Array.isArray(result) ? result : (result as { rows: unknown[] }).rows };
    },
  };
}

/** Drizzle's own members the guard needs: how it turns a query into text, and its nested transactions. */
type DrizzleInternals = {
  dialect: { sqlToQuery(sql: unknown): { sql: string } };
  transaction(work: (tx: object) => Promise<unknown>, config?: unknown): Promise<unknown>;
};

function guarded<Tx extends object>(tx: Tx): Tx {
  const internals = tx as unknown as DrizzleInternals & Pick<DrizzleDatabase, "execute">;
  return guardObject(tx, {
    execute(query: SQLWrapper | string) {
      refuseTransactionControl(typeof query === "string" ? query : internals.dialect.sqlToQuery(query.getSQL()).sql);
      return internals.execute(query as SQLWrapper);
    },
    transaction: (work: (tx: object) => Promise<unknown>, config?: unknown) => internals.transaction((nested) => work(guarded(nested)), config),
    setTransaction: refusedMember("setTransaction"),
    // The session holds the connection (`tx.session.client.release()`).
    session: refusedObject("session"),
  });
}

/**
 * The store's SQL text and its $n parameters as Drizzle sends them (what `sql` builds, reduced to the
 * one method `execute` calls), so this file imports only Drizzle's types.
 */
function rawQuery(sql: string, params: unknown[]): SQLWrapper {
  const query = { toQuery: () => ({ sql, params }) };
  return { getSQL: () => query } as unknown as SQLWrapper;
}
