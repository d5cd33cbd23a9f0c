// PostgresStore on PGlite (embedded PostgreSQL), with transactions for executeInTransaction.
import type { PGlite, Transaction } from "@electric-sql/pglite";
import type { TransactionalSqlClient } from "../stores/postgres-store";
import { refusedMember, refuseTransactionControl, templateText } from "../stores/clients/transaction-guard";

/**
 * What the operation of `executeInTransaction` gets: PGlite's `query`, `sql` and `exec` behind the
 * transaction guard (one statement per call), without `rollback`: throw to roll back.
 */
export type PgliteTransaction = Pick<Transaction, "query" | "sql" | "exec">;

/**
 * PGlite runs one statement at a time: a transaction holds the whole database until it commits, so a
 * duplicate simply waits for it (within the handler's store timeout).
 *
 * @example
 * const store = new PostgresStore(pgliteClient(new PGlite("./data")));
 */
export function pgliteClient(db: PGlite): TransactionalSqlClient<PgliteTransaction> {
  return {
    query: (text, params) => db.query(text, params),
    transaction: (work) =>
      db.transaction((tx) => work({ query: (text, params) => tx.query(text, params) }, guarded(tx))),
  };
}

function guarded(tx: Transaction): PgliteTransaction {
  return {
    query: (text, params, options) => {
      refuseTransactionControl(text);
      return tx.query(text, params, options);
    },
    sql: (strings, ...params: unknown[]) => {
      refuseTransactionControl(templateText(strings, params, fragment));
      return tx.sql(strings, ...params);
    },
    exec: (text, options) => {
      refuseTransactionControl(text);
      return tx.exec(text, options);
    },
    // Not part of the type: a clear refusal for JavaScript callers and casts.
    ...{ rollback: refusedMember("rollback") },
  };
}

/** PGlite's `raw`/`identifier` parts are inlined and its nested `sql` fragments expanded; anything else is a value. */
function fragment(value: unknown): string | undefined {
  const {
    _templateType: type,
    str,
    strings,
    values,
  } = (value ?? {}) as { _templateType?: unknown; str?: string; strings?: string[]; values?: unknown[] };
  if (type === "part") return str;
  return type === "container" ? templateText(strings ?? [], values ?? [], fragment) : undefined;
}
