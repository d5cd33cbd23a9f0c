// PostgresStore on Knex (the `pg` client), with transactions (`knex.transaction`) for executeInTransaction.
import type { Knex } from "knex";
import type { SqlClient, TransactionalSqlClient } from "../postgres-store";
import { guardObject, refusedMember, refuseTransactionControl } from "./transaction-guard";

/**
 * The operation gets the `trx` of `knex.transaction` (its query builder and `raw`) behind the
 * transaction guard: raw SQL that would end the transaction is refused, as are `commit`, `rollback`
 * and `destroy`; nested `transaction` / `savepoint` calls are guarded too.
 *
 * @example
 * const db = knex({ client: "pg", connection: process.env.DATABASE_URL });
 * const store = new PostgresStore(knexClient(db));
 * await handler.executeInTransaction(scope, ({ tx: trx }) => trx("orders").insert(order));
 */
export function knexClient(db: Knex): TransactionalSqlClient<Knex.Transaction> {
  return {
    ...on(db),
    transaction: (work) => db.transaction((trx) => work(on(trx), guarded(trx))),
  };
}

function on(db: Knex): SqlClient {
  return {
    async query(text, params = []) {
      const { sql, bindings } = positional(text, params);
      return { rows: (await db.raw<{ rows: unknown[] }>(sql, bindings as Knex.RawBinding[])).rows };
    },
  };
}

/**
 * Knex binds `?` placeholders, not the store's `$n`: each `$n` becomes a `?` with its value (a value
 * used twice is bound twice), and a literal `?` is escaped so Knex leaves it alone.
 */
function positional(text: string, params: unknown[]): { sql: string; bindings: unknown[] } {
  const bindings: unknown[] = [];
  const sql = text
    .replace(/\?/g, "\\?")
    .replace(/\$(\d+)/g, (_, n: string) => (bindings.push(params[Number(n) - 1]), "?"));
  return { sql, bindings };
}

type Scoped = (trx: Knex.Transaction) => unknown;

function guarded(trx: Knex.Transaction): Knex.Transaction {
  const nested =
    (name: "transaction" | "savepoint") =>
    (work: Scoped, ...rest: unknown[]) =>
      (trx[name] as (work: Scoped, ...rest: unknown[]) => unknown)((inner) => work(guarded(inner)), ...rest);
  const members = {
    raw: (sql: string, bindings?: unknown) => {
      refuseTransactionControl(sql);
      // A Knex.raw passed as a binding is inlined as SQL.
      for (const binding of Array.isArray(bindings) ? bindings : Object.values(bindings ?? {})) {
        const fragment = (binding as { sql?: unknown } | null)?.sql;
        if (typeof fragment === "string") refuseTransactionControl(fragment);
      }
      return (trx.raw as (...args: unknown[]) => unknown)(sql, ...(bindings === undefined ? [] : [bindings]));
    },
    transaction: nested("transaction"),
    savepoint: nested("savepoint"),
    commit: refusedMember("commit"),
    rollback: refusedMember("rollback"),
    destroy: refusedMember("destroy"),
  };
  // `trx("orders")` builds a query on the transaction; only its members need the guard.
  return new Proxy(guardObject(trx, members), {
    apply: (_, __, args: unknown[]): unknown => Reflect.apply(trx, undefined, args),
  });
}
