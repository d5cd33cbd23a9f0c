// SqliteStore on better-sqlite3: one process's database file.
import type { Database, Statement } from "better-sqlite3";
import type { SqliteClient, SqliteResult, SqliteStatement } from "../sqlite-store";

/**
 * better-sqlite3 answers synchronously, so a batch runs inside one `db.transaction()` with nothing
 * of the event loop in between: no other request's statement can land inside it. Statements are
 * prepared once and kept.
 *
 * @example
 * const db = new Database("idempotency.db");
 * db.pragma("journal_mode = WAL");
 * const store = new SqliteStore(betterSqlite3Client(db));
 */
export function betterSqlite3Client(db: Database): SqliteClient {
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
  return {
    execute: (statement) => new Promise((resolve) => resolve(run(statement))),
    batch: (statements) => new Promise((resolve) => resolve(batch.immediate(statements))),
  };
}
