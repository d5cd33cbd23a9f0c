// SqliteStore on better-sqlite3: one process's database file, with transactions for executeInTransaction.
import type { Database, Statement } from "better-sqlite3";
import type { SqliteClient, SqliteResult, SqliteStatement, TransactionalSqliteClient } from "../sqlite-store";
import { refusedMember, refuseTransactionControl } from "./transaction-guard";

/**
 * What the operation of `executeInTransaction` gets: the database's `prepare` and `exec` behind the
 * transaction guard, and neither `transaction` nor `close`. Type your helpers' `tx` with it.
 */
export type BetterSqlite3Transaction = Pick<Database, "prepare" | "exec">;

/**
 * better-sqlite3 answers synchronously, so a batch runs inside one `db.transaction()` with nothing
 * of the event loop in between. A transaction of `executeInTransaction` does await (the operation's
 * own work), and the database is one connection: every statement of the store and every transaction
 * waits for the open transaction to end, so no other request's statement lands inside it. A duplicate
 * therefore waits behind the whole first transaction, then replays.
 *
 * Other code using the same `Database` while a transaction is open runs inside it (and commits or rolls
 * back with it): give such code its own connection, or run its writes through `executeInTransaction`.
 *
 * @example
 * const db = new Database("idempotency.db");
 * db.pragma("journal_mode = WAL");
 * const store = new SqliteStore(betterSqlite3Client(db));
 */
export function betterSqlite3Client(db: Database): TransactionalSqliteClient<BetterSqlite3Transaction> {
  const prepared = new Map<string, Statement>();
  const run = ({ sql, args }: SqliteStatement): SqliteResult => {
    let statement = prepared.get(sql);
    if (statement === undefined) prepared.set(sql, (statement = db.prepare(sql)));
    if (statement.reader) {
      const rows = statement.all(...args) as Array<Record<string, unknown>>;
      return { rows, changes: rows.length };
    }
    return { rows: [], changes: statement.run(...args).changes };
  };
  const batch = db.transaction((statements: SqliteStatement[]) => statements.map(run));
  // Settles when the open transaction (if any) has ended; statements and transactions queue behind it.
  let open: Promise<unknown> = Promise.resolve();
  const inside: SqliteClient = {
    execute: (statement) => new Promise((resolve) => resolve(run(statement))),
    // Inside the open transaction, better-sqlite3 turns this into a savepoint.
    batch: (statements) => new Promise((resolve) => resolve(batch(statements))),
  };
  return {
    execute: (statement) => open.then(() => run(statement)),
    batch: (statements) => open.then(() => batch.immediate(statements)),
    transaction(work) {
      const ended = open.then(() => inTransaction(db, run, () => work(inside, guarded(db))));
      open = ended.catch(() => {});
      return ended;
    },
  };
}

async function inTransaction<T>(
  db: Database,
  run: (statement: SqliteStatement) => SqliteResult,
  work: () => Promise<T>,
): Promise<T> {
  // IMMEDIATE takes the write lock now: another process's writer makes it wait (the Database's
  // `timeout`) or fail with SQLITE_BUSY, never deadlock halfway through the operation.
  run({ sql: "BEGIN IMMEDIATE", args: [] });
  try {
    const result = await work();
    run({ sql: "COMMIT", args: [] });
    return result;
  } catch (err) {
    // Some errors (SQLITE_FULL, SQLITE_IOERR) have already rolled the transaction back; a COMMIT that
    // failed has not, and the next request must never find it open.
    if (db.inTransaction) run({ sql: "ROLLBACK", args: [] });
    throw err;
  }
}

/** The operation's statements pass the guard: a COMMIT of its own would commit the record alone. */
function guarded(db: Database): BetterSqlite3Transaction {
  const transaction: BetterSqlite3Transaction = {
    // better-sqlite3's own signature (NonNullable<unknown> is its `{}`), so the statement keeps its types.
    prepare: <BindParameters extends unknown[] | NonNullable<unknown> = unknown[], Result = unknown>(sql: string) => {
      refuseTransactionControl(sql);
      return db.prepare<BindParameters, Result>(sql);
    },
    exec: (sql: string) => (refuseTransactionControl(sql), db.exec(sql), transaction as unknown as Database),
  };
  // Not part of the type: a clear refusal for JavaScript callers and casts.
  return Object.assign(transaction, { transaction: refusedMember("transaction"), close: refusedMember("close") });
}
