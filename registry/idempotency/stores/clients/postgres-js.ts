// PostgresStore on postgres.js (`postgres`), with transactions (`sql.begin`) for executeInTransaction.
import type { ISql, Sql, TransactionSql } from "postgres";
import type { SqlClient, TransactionalSqlClient } from "../postgres-store";
import { refusedMember, refuseTransactionControl, templateText } from "./transaction-guard";

/**
 * What the operation of `executeInTransaction` gets: the transaction's tag, `unsafe`, `batch` and
 * helpers behind the transaction guard, and `savepoint` (its `sql` guarded too); `rollback`, `prepare`
 * (two-phase commit) and `file` (text the guard cannot read first) are refused. Type helpers with it
 * or with postgres.js's own `ISql`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- postgres.js's own default for its custom types.
export interface PostgresJsTransaction<Types extends Record<string, unknown> = {}> extends ISql<Types> {
  savepoint<T>(work: (sql: PostgresJsTransaction<Types>) => T | Promise<T>): Promise<Awaited<T>>;
  savepoint<T>(name: string, work: (sql: PostgresJsTransaction<Types>) => T | Promise<T>): Promise<Awaited<T>>;
}

/**
 * @example
 * const sql = postgres(process.env.DATABASE_URL);
 * const store = new PostgresStore(postgresJsClient(sql));
 * await handler.executeInTransaction(scope, async ({ tx }) => tx`INSERT INTO orders ${tx(order)}`);
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- postgres.js's own default for its custom types.
export function postgresJsClient<Types extends Record<string, unknown> = {}>(
  sql: Sql<Types>,
): TransactionalSqlClient<PostgresJsTransaction<Types>> {
  return {
    ...on(sql),
    transaction: (work) => sql.begin((tx) => work(on(tx), guarded(tx))),
  };
}

function on<Types extends Record<string, unknown>>(sql: Sql<Types> | TransactionSql<Types>): SqlClient {
  // `unsafe` is postgres.js's call for SQL text with $n parameters; the store's text is fixed, its values are parameters.
  // `prepare: true` follows the client's own `prepare` option (on by default, off for PgBouncer), as its
  // tagged templates do: unprepared, postgres.js asks the parameter types first, a second round trip per statement.
  return {
    query: async (text, params = []) => ({ rows: await sql.unsafe(text, params as never[], { prepare: true }) }),
  };
}

type Savepoint = (...args: unknown[]) => unknown;

/** The transaction's `sql`, checked before each query is built: the tag and `unsafe` (fragments included), `batch`. */
function guarded<Types extends Record<string, unknown>>(tx: TransactionSql<Types>): PostgresJsTransaction<Types> {
  const savepoint =
    (original: Savepoint) =>
    (...args: unknown[]) =>
      original(
        ...args.map((arg) =>
          typeof arg === "function" ? (sp: TransactionSql<Types>) => (arg as Savepoint)(guarded(sp)) : arg,
        ),
      );
  const members: Record<string | symbol, unknown> = {
    unsafe: (text: string, ...rest: unknown[]) => (
      refuseTransactionControl(text),
      (tx.unsafe as Savepoint)(text, ...rest)
    ),
    batch: (queries: unknown[]) => {
      if (Array.isArray(queries)) for (const query of queries) refuseTransactionControl(queryText(query));
      return tx.batch(queries as never);
    },
    savepoint: savepoint(tx.savepoint.bind(tx) as Savepoint),
    begin: savepoint(tx.savepoint.bind(tx) as Savepoint),
    rollback: refusedMember("rollback"),
    prepare: refusedMember("prepare"),
    file: refusedMember("file"),
  };
  return new Proxy(tx, {
    apply(target, _this, args: unknown[]): unknown {
      const [first, ...values] = args as [unknown, ...unknown[]];
      // A tagged template (not a helper call such as tx(table) or tx(row)): check the text it builds.
      if (Array.isArray((first as { raw?: unknown } | null)?.raw))
        refuseTransactionControl(templateText(first as string[], values, fragment));
      return Reflect.apply(target, undefined, args);
    },
    get: (target, name): unknown => (name in members ? members[name] : Reflect.get(target, name)),
  });
}

/** A postgres.js query's text: a tagged query's strings with its fragments expanded, or `unsafe`'s text. */
function queryText(query: unknown): string | undefined {
  const { strings, args } = (query ?? {}) as { strings?: string[]; args?: unknown[] };
  return Array.isArray(strings) ? templateText(strings, args ?? [], fragment) : undefined;
}

/** Fragments postgres.js inlines: queries, `join`s and arrays of queries; anything else is a value. */
function fragment(value: unknown): string | undefined {
  if (Array.isArray(value))
    return value.length > 0 && value.every((item) => queryText(item) !== undefined)
      ? value.map(queryText).join(" ")
      : undefined;
  const { separator, items } = (value ?? {}) as { separator?: unknown; items?: unknown[] };
  if (Array.isArray(items)) return items.map((item) => queryText(item) ?? "$0").join(queryText(separator) ?? ",");
  return queryText(value);
}
