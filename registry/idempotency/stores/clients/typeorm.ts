// PostgresStore on TypeORM (a DataSource on the postgres driver), with transactions for executeInTransaction.
import type { DataSource, EntityManager, QueryRunner } from "typeorm";
import type { SqlClient, TransactionalSqlClient } from "../postgres-store";
import { guardObject, refusedMember, refuseTransactionControl, templateText } from "./transaction-guard";

/**
 * The operation gets the transaction's `EntityManager` (repositories, query builders, `query`, `sql`)
 * behind the transaction guard: raw SQL that would end the transaction is refused, nested
 * `transaction` calls (savepoints) are guarded too, and its `queryRunner` (which could commit,
 * roll back or release the connection) offers only `query`.
 *
 * @example
 * const dataSource = await new DataSource({ type: "postgres", url: process.env.DATABASE_URL }).initialize();
 * const store = new PostgresStore(typeormClient(dataSource));
 * await handler.executeInTransaction(scope, ({ tx: manager }) => manager.getRepository(Order).insert(order));
 */
export function typeormClient(dataSource: DataSource): TransactionalSqlClient<EntityManager> {
  return {
    async query(text, params) {
      // A runner of its own, released at once: DataSource.query answers UPDATE and DELETE as [rows, count].
      const runner = dataSource.createQueryRunner();
      try {
        return await on(runner).query(text, params);
      } finally {
        await runner.release();
      }
    },
    transaction: (work) =>
      dataSource.transaction((manager) => work(on(manager.queryRunner as QueryRunner), guarded(manager))),
  };
}

function on(runner: QueryRunner): SqlClient {
  return { query: async (text, params) => ({ rows: (await runner.query(text, params, true)).records }) };
}

function guarded(manager: EntityManager): EntityManager {
  const runner = manager.queryRunner as QueryRunner;
  return guardObject(manager, {
    query: (text: string, params?: unknown[]) => (refuseTransactionControl(text), manager.query(text, params)),
    sql: (strings: TemplateStringsArray, ...values: unknown[]) => {
      // TypeORM inlines what a function returns as raw SQL: call each once, check, and hand over the results.
      const settled = values.map((value) => (typeof value === "function" ? memo((value as () => unknown)()) : value));
      refuseTransactionControl(
        templateText(strings, settled, (value) =>
          typeof value === "function" ? inlined((value as () => unknown)()) : undefined,
        ),
      );
      return manager.sql(strings, ...settled);
    },
    transaction: (...args: unknown[]) => {
      const work = args.pop() as (nested: EntityManager) => Promise<unknown>;
      const run = (nested: EntityManager) => work(guarded(nested));
      // TypeORM's two forms: transaction(run), or transaction(isolationLevel, run).
      return args.length === 0 ? manager.transaction(run) : manager.transaction(args[0] as IsolationLevel, run);
    },
    queryRunner: guardObject(runner, {
      query: (text: string, params?: unknown[]) => (refuseTransactionControl(text), runner.query(text, params)),
      startTransaction: refusedMember("queryRunner.startTransaction"),
      commitTransaction: refusedMember("queryRunner.commitTransaction"),
      rollbackTransaction: refusedMember("queryRunner.rollbackTransaction"),
      release: refusedMember("queryRunner.release"),
    }),
  });
}

/** TypeORM does not export its isolation levels' type from "typeorm": the first parameter of `transaction`'s two-argument form. */
type IsolationLevel = Parameters<EntityManager["transaction"]>[0];

function memo(value: unknown): () => unknown {
  return () => value;
}

function inlined(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}
