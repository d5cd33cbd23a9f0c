// PostgresStore on node-postgres (`pg`): a Pool or a Client, with transactions for executeInTransaction.
import type { Client, Pool, PoolClient } from "pg";
import type { SqlClient, TransactionalSqlClient } from "../postgres-store";
import { refusedMember, refuseTransactionControl } from "./transaction-guard";

/**
 * What the operation of `executeInTransaction` gets: the connection's `query` (every form: text,
 * config, cursor) behind the transaction guard, and nothing that could end the transaction or hand
 * the connection back (`release`, `end`). Type your helpers' `tx` with it.
 */
export type PgTransaction = Pick<PoolClient, "query" | "escapeIdentifier" | "escapeLiteral">;

/**
 * A Pool lends one connection per transaction. A Client is one connection, so its transactions run
 * one after another (a Pool suits a server; a Client suits a script or a test).
 *
 * @example
 * const store = new PostgresStore(pgClient(new pg.Pool({ connectionString: process.env.DATABASE_URL })));
 * await handler.executeInTransaction(scope, async ({ tx }) => tx.query("INSERT INTO orders ...", [...]));
 */
export function pgClient(db: Pool | Client): TransactionalSqlClient<PgTransaction> {
  if (!isPool(db)) {
    // One connection: every statement and transaction waits for the one before, so a statement never
    // lands inside another caller's open transaction.
    let previous: Promise<unknown> = Promise.resolve();
    const queued = <T>(run: () => Promise<T>): Promise<T> => {
      const next = previous.then(run);
      previous = next.catch(() => {});
      return next;
    };
    return {
      query: (text, params) => queued(() => db.query(text, params)),
      transaction: async (work) => outcome(await queued(() => inTransaction(db, work))),
    };
  }
  return {
    query: (text, params) => db.query(text, params),
    async transaction(work) {
      const connection = await db.connect();
      // A checked-out client whose connection dies emits 'error', which kills the process when nobody
      // listens (the pool only listens to idle ones); the statement in flight rejects with it anyway.
      const ignore = () => {};
      connection.on("error", ignore);
      const ended = await inTransaction(connection, work);
      connection.off("error", ignore);
      // A connection whose BEGIN, COMMIT or ROLLBACK failed may be broken or mid-transaction: destroy it.
      connection.release(ended.clean ? undefined : toError(ended.error));
      return outcome(ended);
    },
  };
}

type Ended<T> = { ok: true; result: T; clean: true } | { ok: false; error: unknown; clean: boolean };

/** Never rejects: says how the transaction ended and whether the connection is left clean. */
async function inTransaction<T>(
  connection: PoolClient | Client,
  work: (sql: SqlClient, tx: PgTransaction) => Promise<T>,
): Promise<Ended<T>> {
  try {
    await connection.query("BEGIN");
  } catch (error) {
    return { ok: false, error, clean: false };
  }
  let result: T;
  try {
    result = await work({ query: (text, params) => connection.query(text, params) }, guarded(connection));
  } catch (error) {
    const clean = await connection.query("ROLLBACK").then(
      () => true,
      () => false,
    );
    return { ok: false, error, clean };
  }
  try {
    await connection.query("COMMIT");
  } catch (error) {
    return { ok: false, error, clean: false };
  }
  return { ok: true, result, clean: true };
}

/**
 * A route that released the connection mid-transaction handed it to the next request, whose record and
 * writes this transaction's COMMIT then committed; one that ran COMMIT left its writes and a PROCESSING
 * record behind. The operation gets only the guarded query surface.
 */
function guarded(connection: PoolClient | Client): PgTransaction {
  const query = (config: unknown, ...rest: unknown[]) => {
    refuseTransactionControl(queryText(config));
    return (connection.query as (...args: unknown[]) => unknown)(config, ...rest);
  };
  return {
    query: query as PgTransaction["query"],
    escapeIdentifier: (text) => connection.escapeIdentifier(text),
    escapeLiteral: (text) => connection.escapeLiteral(text),
    // Not part of the type: a clear refusal for JavaScript callers and casts.
    ...{ release: refusedMember("release"), end: refusedMember("end") },
  };
}

/** The SQL of any form `query` takes: text, a config object, or a Submittable (pg-cursor, pg-query-stream). */
function queryText(config: unknown): unknown {
  if (typeof config !== "object" || config === null) return config;
  const { text, cursor } = config as { text?: unknown; cursor?: { text?: unknown } };
  return text ?? cursor?.text;
}

function outcome<T>(ended: Ended<T>): T {
  if (!ended.ok) throw ended.error;
  return ended.result;
}

function isPool(db: Pool | Client): db is Pool {
  // Only a Pool counts its connections.
  return "totalCount" in db;
}

function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
