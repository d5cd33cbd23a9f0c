// SqliteStore on libSQL through @libsql/client: a local file, or Turso shared by every app server.
import type { Client, InStatement, ResultSet, Transaction } from "@libsql/client";
import type { SqliteClient, SqliteResult, TransactionalSqliteClient } from "../sqlite-store";
import { refusedMember, refuseTransactionControl } from "./transaction-guard";

/**
 * What the operation of `executeInTransaction` gets: the transaction's `execute` and `batch` behind the
 * transaction guard, and neither `commit`, `rollback` nor `close`. Type your helpers' `tx` with it.
 */
export type LibsqlTransaction = Pick<Transaction, "execute" | "batch">;

/**
 * A batch is one libSQL write transaction, sent as one request to a remote database. A transaction of
 * `executeInTransaction` is `client.transaction("write")`, which holds the database's one write lock
 * from its start. This client's statements and transactions wait for the open transaction to end: on
 * a local file, a write that met the lock would block the whole process in SQLite's busy wait, and an
 * in-memory database has only the one connection the transaction holds. A duplicate therefore waits
 * behind the whole first transaction, then replays; another process's writer makes the transaction
 * wait up to the client's `timeout`, then REQUEST_IN_PROGRESS.
 *
 * @example
 * const store = new SqliteStore(libsqlClient(createClient({ url: process.env.TURSO_URL!, authToken })));
 */
export function libsqlClient(client: Client): TransactionalSqliteClient<LibsqlTransaction> {
  // Settles when the open transaction (if any) has ended.
  let open: Promise<unknown> = Promise.resolve();
  return {
    execute: async (statement) => (await open, toResult(await client.execute(statement as InStatement))),
    batch: async (statements) => (await open, (await client.batch(statements as InStatement[], "write")).map(toResult)),
    transaction(work) {
      const ended = open.then(() => inTransaction(client, work));
      open = ended.catch(() => {});
      return ended;
    },
  };
}

async function inTransaction<T>(
  client: Client,
  work: (client: SqliteClient, tx: LibsqlTransaction) => Promise<T>,
): Promise<T> {
  const transaction = await client.transaction("write");
  try {
    const result = await work(scoped(transaction), guarded(transaction));
    await transaction.commit();
    return result;
  } catch (err) {
    // After a failed commit too: the connection goes back to the client's pool only once it is closed.
    await transaction.rollback().catch(() => {});
    throw err;
  } finally {
    transaction.close();
  }
}

function scoped(transaction: Transaction): SqliteClient {
  return {
    execute: async (statement) => toResult(await transaction.execute(statement)),
    batch: async (statements) => (await transaction.batch(statements as InStatement[])).map(toResult),
  };
}

/** The operation's statements pass the guard: a COMMIT of its own would commit the record alone. */
function guarded(transaction: Transaction): LibsqlTransaction {
  const check = (statement: InStatement) =>
    refuseTransactionControl(typeof statement === "string" ? statement : statement.sql);
  return {
    // execute(statement) and execute(sql, args): the text is the first argument either way.
    execute: (statement: InStatement, ...rest: unknown[]) => (
      check(statement),
      (transaction.execute as (...args: unknown[]) => unknown)(statement, ...rest)
    ),
    batch: (statements: InStatement[]) => (statements.forEach(check), transaction.batch(statements)),
    // Not part of the type: a clear refusal for JavaScript callers and casts.
    ...Object.fromEntries(
      ["commit", "rollback", "close", "executeMultiple"].map((name) => [name, refusedMember(name)]),
    ),
  } as LibsqlTransaction;
}

function toResult(result: ResultSet): SqliteResult {
  return { rows: result.rows, changes: result.rowsAffected };
}
