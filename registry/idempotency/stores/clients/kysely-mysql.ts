// MySqlStore on Kysely (MysqlDialect over a mysql2 pool), with transactions for executeInTransaction.
import type { Kysely, Transaction } from "kysely";
import type { MySqlClient, TransactionalMySqlClient } from "../mysql-store";
import { guardedKysely, kyselyRawQuery } from "./kysely-guard";

/**
 * The operation gets Kysely's `trx` behind the transaction guard: raw SQL that would end the transaction
 * (and MySQL's DDL and LOCK TABLES, which would commit the record alone) is refused, as is
 * `startTransaction`; Kysely itself refuses `transaction`, `connection` and `destroy` on a transaction.
 *
 * @example
 * const db = new Kysely<DB>({ dialect: new MysqlDialect({ pool: createPool(process.env.MYSQL_URL!) }) }); // createPool from "mysql2"
 * const store = new MySqlStore(kyselyMySqlClient(db));
 * await handler.executeInTransaction(scope, ({ tx: trx }) => trx.insertInto("orders").values(order).execute());
 */
export function kyselyMySqlClient<DB>(db: Kysely<DB>): TransactionalMySqlClient<Transaction<DB>> {
  return {
    ...on(db),
    transaction: (work) => db.transaction().execute((trx) => work(on(trx), guardedKysely(trx, "mysql"))),
  };
}

/** Kysely answers a write with its counts as bigints and no rows; the store reads mysql2's `[header]` or `[rows]`. */
function on<DB>(db: Kysely<DB>): MySqlClient {
  return {
    async query(sql, values = []) {
      const result = await db.executeQuery(kyselyRawQuery(sql, values));
      if (result.numAffectedRows === undefined) return [result.rows, undefined];
      return [{ affectedRows: Number(result.numAffectedRows), insertId: Number(result.insertId ?? 0n) }, undefined];
    },
  };
}
