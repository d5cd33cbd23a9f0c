// MySqlStore on Drizzle ORM over mysql2 (a Pool or a Connection), with transactions for executeInTransaction.
import type { Connection, Pool } from "mysql2/promise";
import type { MySqlClient, TransactionalMySqlClient } from "../mysql-store";
import { drizzleRawQuery, guardedDrizzle, type DrizzleDatabase, type DrizzleTransaction } from "./drizzle-guard";
import { isPool, oneAtATime } from "./mysql2";

/**
 * The operation gets Drizzle's `tx` behind the transaction guard (see `DrizzleTransaction`); MySQL's
 * DDL and LOCK TABLES, which would commit the record alone, are refused with COMMIT and ROLLBACK.
 * Outside a transaction the store's statements go to the mysql2 Pool or Connection under Drizzle. Over a
 * Connection, the store's statements and transactions run one after another, as with `mysql2Client`.
 *
 * @example
 * const db = drizzle(mysql.createPool(process.env.MYSQL_URL!)); // drizzle-orm/mysql2
 * const store = new MySqlStore(drizzleMySqlClient(db));
 * await handler.executeInTransaction(scope, ({ tx }) => tx.insert(orders).values(order));
 */
export function drizzleMySqlClient<Db extends DrizzleDatabase>(
  db: Db,
): TransactionalMySqlClient<DrizzleTransaction<Db>> {
  const driver = mysql2Of(db.$client);
  const queued = isPool(driver) ? <T>(run: () => Promise<T>) => run() : oneAtATime();
  return {
    query: (sql, values) => queued(() => driver.query(sql, values)),
    transaction: (work) =>
      queued(() =>
        db.transaction((tx: DrizzleTransaction<Db>) => work(on(tx as DrizzleDatabase), guardedDrizzle(tx, "mysql"))),
      ),
  };
}

/** The store's statements inside the transaction, on its connection through `tx.execute`. */
function on(tx: Pick<DrizzleDatabase, "execute">): MySqlClient {
  return {
    async query(sql, values = []) {
      try {
        return (await tx.execute(drizzleRawQuery(sql, values))) as [unknown, unknown];
      } catch (err) {
        // Drizzle wraps mysql2's error (DrizzleQueryError); the store reads its errno (1205, 1213).
        throw driverError(err);
      }
    },
  };
}

function driverError(err: unknown): unknown {
  const cause = typeof err === "object" && err !== null ? (err as { cause?: unknown }).cause : undefined;
  return typeof cause === "object" && cause !== null && "errno" in cause ? cause : err;
}

/** What `drizzle(client)` was given: a mysql2/promise Pool or Connection, or a callback one (Drizzle calls its `promise()`). */
function mysql2Of(client: unknown): Pool | Connection {
  if (typeof client !== "object" || client === null || typeof (client as Partial<Pool>).query !== "function") {
    throw new TypeError(
      "drizzleMySqlClient: this Drizzle database has no mysql2 client ($client); build it with drizzle(pool) from drizzle-orm/mysql2.",
    );
  }
  const { promise } = client as { promise?: (this: unknown) => Pool | Connection };
  return typeof promise === "function" ? Reflect.apply(promise, client, []) : (client as Pool | Connection);
}
