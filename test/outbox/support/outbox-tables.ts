// Outbox tables of their own per test (the servers are shared), and waiting on what the relay does.
import { dropStatements, schemaStatements } from "@/blocks/outbox/postgres-schema";
import type { SqlClient } from "@/blocks/outbox/sql-client";

export const databaseUrl = process.env.DATABASE_URL;

/** A name no other test file or process uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
}

/** Creates a fresh outbox table; `drop()` removes it. */
export async function freshOutbox(db: SqlClient, prefix = "outbox"): Promise<{ table: string; drop(): Promise<void> }> {
  const table = uniqueName(prefix);
  for (const sql of schemaStatements(table)) await db.query(sql, []);
  return {
    table,
    async drop() {
      for (const sql of dropStatements(table)) await db.query(sql, []);
    },
  };
}

export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
  what = "condition",
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
