// A SqlClient over a pg Pool that sends every statement as a named prepared statement.
import { createHash } from "node:crypto";
import type pg from "pg";
import type { SqlClient } from "@/blocks/idempotency";

/**
 * PostgresStore accepts any `query(text, params)` client, so this needs no change to the block: pg then
 * parses each statement once per connection, and PostgreSQL plans it generically after five runs.
 */
export function preparedClient(pool: pg.Pool): SqlClient {
  const names = new Map<string, string>();
  const nameOf = (text: string) => {
    let name = names.get(text);
    if (!name) {
      name = `idem_${createHash("sha1").update(text).digest("hex").slice(0, 16)}`;
      names.set(text, name);
    }
    return name;
  };
  return { query: (text, values) => pool.query({ name: nameOf(text), text, values }) };
}
