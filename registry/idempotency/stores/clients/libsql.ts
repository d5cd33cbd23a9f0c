// SqliteStore on libSQL through @libsql/client: a local file, or Turso shared by every app server.
import type { Client, InStatement, ResultSet } from "@libsql/client";
import type { SqliteClient, SqliteResult } from "../sqlite-store";

/**
 * A batch is one libSQL write transaction, sent as one request to a remote database.
 *
 * @example
 * const store = new SqliteStore(libsqlClient(createClient({ url: process.env.TURSO_URL!, authToken })));
 */
export function libsqlClient(client: Client): SqliteClient {
  return {
    execute: async (statement) => toResult(await client.execute(statement as InStatement)),
    batch: async (statements) => (await client.batch(statements as InStatement[], "write")).map(toResult),
  };
}

function toResult(result: ResultSet): SqliteResult {
  return { rows: result.rows as unknown as Array<Record<string, unknown>>, changes: result.rowsAffected };
}
