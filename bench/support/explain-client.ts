// A SqlClient that runs each statement under EXPLAIN (ANALYZE, BUFFERS) in a rolled-back transaction.
import type pg from "pg";
import type { SqlClient } from "@/blocks/idempotency";

/**
 * The store under test sends its real statement; we execute it for its plan and roll it back, so the
 * table is left as it was. The store gets plan rows instead of results, so call the store, not the handler.
 */
export class ExplainClient implements SqlClient {
  readonly plans: string[] = [];

  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  async query(text: string, params: unknown[] = []): Promise<{ rows: unknown[] }> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      const { rows } = await client.query<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, params);
      this.plans.push(rows.map((row) => row["QUERY PLAN"]).join("\n"));
      // One empty row: enough for the store to read its result shape without throwing.
      return { rows: [{}] };
    } finally {
      await client.query("ROLLBACK").catch(() => {});
      client.release();
    }
  }
}

/** Scan nodes of a plan, e.g. `Index Scan using x_expires_at_idx on x`, to show at a glance which access paths it took. */
export function scanNodes(plan: string): string[] {
  const nodes = plan.match(
    /(?:Parallel )?(?:Seq Scan|Index Scan|Index Only Scan|Bitmap Heap Scan|Bitmap Index Scan)(?: Backward)?(?: using \S+)? on \S+/g,
  );
  return [...new Set(nodes ?? [])];
}
