// MySqlStore on mysql2 (mysql2/promise): a Pool or a Connection, with transactions for executeInTransaction.
import type { Connection, Pool, PoolConnection } from "mysql2/promise";
import type { MySqlClient, TransactionalMySqlClient } from "../mysql-store";
import { refusedMember, refuseTransactionControl } from "./transaction-guard";

/**
 * What the operation of `executeInTransaction` gets: the connection's `query` and `execute` behind the
 * transaction guard, its escaping helpers, and nothing that could end the transaction or hand the
 * connection back (`commit`, `rollback`, `release`, `end`, `destroy`). Type your helpers' `tx` with it.
 */
export type MySqlTransaction = Pick<Connection, "query" | "execute" | "escape" | "escapeId" | "format">;

/**
 * A Pool lends one connection per transaction. A Connection is one connection, so its transactions
 * run one after another, and a duplicate waits behind the whole first transaction.
 *
 * @example
 * const store = new MySqlStore(mysql2Client(mysql.createPool(process.env.MYSQL_URL!)));
 * await handler.executeInTransaction(scope, async ({ tx }) => tx.query("INSERT INTO orders ...", [...]));
 */
export function mysql2Client(db: Pool | Connection): TransactionalMySqlClient<MySqlTransaction> {
  const query: MySqlClient["query"] = (sql, values) => db.query(sql, values);
  if (!isPool(db)) {
    const queued = oneAtATime();
    return {
      query: (sql, values) => queued(() => query(sql, values)),
      transaction: async (work) => outcome(await queued(() => inTransaction(db, work))),
    };
  }
  return {
    query,
    async transaction(work) {
      const connection = await db.getConnection();
      const ended = await inTransaction(connection, work);
      // A connection whose START TRANSACTION, COMMIT or ROLLBACK failed may be broken or still inside
      // the transaction: the next borrower must never inherit it.
      if (ended.clean) connection.release();
      else connection.destroy();
      return outcome(ended);
    },
  };
}

type Ended<T> = { ok: true; result: T; clean: true } | { ok: false; error: unknown; clean: boolean };

/** Never rejects: says how the transaction ended and whether the connection is left clean. */
async function inTransaction<T>(
  connection: Connection | PoolConnection,
  work: (sql: MySqlClient, tx: MySqlTransaction) => Promise<T>,
): Promise<Ended<T>> {
  try {
    await connection.beginTransaction();
  } catch (error) {
    return { ok: false, error, clean: false };
  }
  let result: T;
  try {
    result = await work({ query: (sql, values) => connection.query(sql, values) }, guarded(connection));
  } catch (error) {
    const clean = await connection.rollback().then(
      () => true,
      () => false,
    );
    return { ok: false, error, clean };
  }
  try {
    await connection.commit();
  } catch (error) {
    return { ok: false, error, clean: false };
  }
  return { ok: true, result, clean: true };
}

/**
 * The operation's statements pass the guard first: MySQL also commits the open transaction before DDL
 * and LOCK TABLES, which would commit the record alone, so those are refused with COMMIT and ROLLBACK.
 */
function guarded(connection: Connection | PoolConnection): MySqlTransaction {
  const checked =
    (method: "query" | "execute") =>
    (options: unknown, ...rest: unknown[]) => {
      refuseTransactionControl(statementText(options), "mysql");
      const call = Reflect.get(connection, method) as (this: typeof connection, ...args: unknown[]) => unknown;
      return Reflect.apply(call, connection, [options, ...rest]);
    };
  const transaction: MySqlTransaction = {
    query: checked("query") as MySqlTransaction["query"],
    execute: checked("execute") as MySqlTransaction["execute"],
    escape: (value) => connection.escape(value),
    escapeId: (value: string | string[]) =>
      typeof value === "string" ? connection.escapeId(value) : connection.escapeId(value),
    format: (sql, values) => connection.format(sql, values),
  };
  // Not part of the type: a clear refusal for JavaScript callers and casts.
  const refused = ["beginTransaction", "commit", "rollback", "release", "end", "destroy", "changeUser"];
  return Object.assign(transaction, Object.fromEntries(refused.map((name) => [name, refusedMember(name)])));
}

/** The SQL of either form mysql2 takes: text, or an options object `{ sql }`. */
function statementText(options: unknown): unknown {
  return typeof options === "object" && options !== null ? (options as { sql?: unknown }).sql : options;
}

function outcome<T>(ended: Ended<T>): T {
  if (!ended.ok) throw ended.error;
  return ended.result;
}

/** A Pool lends a connection per call; anything else is one connection (see `oneAtATime`). */
export function isPool(db: Pool | Connection): db is Pool {
  return typeof (db as Partial<Pool>).getConnection === "function";
}

/**
 * For one connection: every statement and transaction run through it waits for the one before, so a
 * statement never lands inside another caller's open transaction.
 */
export function oneAtATime(): <T>(run: () => Promise<T>) => Promise<T> {
  let previous: Promise<unknown> = Promise.resolve();
  return (run) => {
    const next = previous.then(run);
    previous = next.catch(() => {});
    return next;
  };
}
