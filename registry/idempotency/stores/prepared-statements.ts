// Opt-in: lets PostgresStore send its statements as named prepared statements through a `pg` Pool.
import { createHash } from "node:crypto";
import type { SqlClient } from "./postgres-store";

/** What `preparedStatements` needs: `query({ name, text, values })`, as a `pg` Pool or Client has. */
export type PreparingClient = {
  query(config: { name: string; text: string; values?: unknown[] | undefined }): Promise<{ rows: unknown[] }>;
};

/**
 * Wraps a `pg` Pool so every statement is prepared once per connection and then only executed.
 * PostgreSQL otherwise plans each `create` again; on a busy database that planning is a large part
 * of a first request's cost. Behaviour is unchanged.
 *
 * Give it to PostgresStore only: it prepares every distinct text it sees, and the store's are a fixed
 * few. Not for PGlite (it has no named statements), nor behind PgBouncer in transaction mode before
 * 1.21 or without `max_prepared_statements`: a named statement lives on one server connection.
 *
 * @example
 * const store = new PostgresStore(preparedStatements(new pg.Pool({ connectionString })));
 */
export function preparedStatements(client: PreparingClient): SqlClient {
  const names = new Map<string, string>();
  return {
    query(text, values) {
      let name = names.get(text);
      if (name === undefined) {
        // Named after the text, so two stores (or tables) sharing a pool never reuse a name for other SQL.
        name = `idempotency_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`;
        names.set(text, name);
      }
      return client.query({ name, text, values });
    },
  };
}
