// PostgresStore on Drizzle ORM (over node-postgres or postgres.js), with transactions for executeInTransaction.
import type { SqlClient, TransactionalSqlClient } from "../postgres-store";
import { drizzleRawQuery, guardedDrizzle, type DrizzleDatabase, type DrizzleTransaction } from "./drizzle-guard";

export type { DrizzleTransaction };

/**
 * @example
 * const db = drizzle(pool); // or drizzle(postgres(url))
 * const store = new PostgresStore(drizzleClient(db));
 * await handler.executeInTransaction(scope, ({ tx }) => tx.insert(orders).values(order));
 */
export function drizzleClient<Db extends DrizzleDatabase>(db: Db): TransactionalSqlClient<DrizzleTransaction<Db>> {
  return {
    ...(driverClient(db.$client) ?? on(db)),
    transaction: (work) =>
      db.transaction((tx: DrizzleTransaction<Db>) => work(on(tx as DrizzleDatabase), guardedDrizzle(tx, "postgres"))),
  };
}

/**
 * Outside a transaction the store's statements go to the driver itself, not through `db.execute`: Drizzle
 * sends raw SQL over postgres.js unprepared, which costs postgres.js a second round trip per statement
 * (it asks for the parameter types first). Drizzle's query logger does not see them.
 */
function driverClient(driver: unknown): SqlClient | undefined {
  if (typeof driver !== "object" && typeof driver !== "function") return undefined;
  const { unsafe, query } = (driver ?? {}) as Partial<PostgresJsDriver & PgDriver>;
  // Called as the driver's methods, not through `.call`: a project without strictBindCallApply types `.call` as any.
  // postgres.js; `prepare: true` follows its own `prepare` option (off for PgBouncer), as in ./postgres-js.ts.
  if (typeof unsafe === "function") {
    const sql = driver as PostgresJsDriver;
    return { query: async (text, params = []) => ({ rows: await sql.unsafe(text, params, { prepare: true }) }) };
  }
  // A pg Pool or Client, or PGlite: the same query(text, params) the store takes.
  if (typeof query === "function") {
    const pg = driver as PgDriver;
    return { query: (text, params) => pg.query(text, params) };
  }
  return undefined;
}

type PostgresJsDriver = {
  unsafe: (text: string, params: unknown[], options: { prepare: boolean }) => Promise<unknown[]>;
};
type PgDriver = { query: (text: string, params?: unknown[]) => Promise<{ rows: unknown[] }> };

function on(db: Pick<DrizzleDatabase, "execute">): SqlClient {
  return {
    async query(text, params = []) {
      const result = await db.execute(drizzleRawQuery(text, params));
      // node-postgres answers a result with `rows`; postgres.js answers the rows themselves.
      return { rows: Array.isArray(result) ? result : (result as { rows: unknown[] }).rows };
    },
  };
}
