// PostgresRateLimitStore: GCRA in one INSERT ... ON CONFLICT DO UPDATE, through any `query(text, params)` client.
import type { GcraRate, RateLimitStore, StoreDecision } from "../types";
import { checkTableName, DEFAULT_RATE_LIMIT_TABLE, schemaStatements } from "./postgres-schema";

/** What the store needs of a driver: a `pg` Pool, a PGlite instance, or anything shaped like them. */
export type SqlClient = {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
};

export type PostgresRateLimitStoreOptions = {
  /** @default "rate_limits" */
  table?: string | undefined;
};

type Row = { allowed: boolean; tat_us: string | number | bigint; now_us: string | number | bigint };

/**
 * One statement per decision. The upsert locks the key's row, and under READ COMMITTED its
 * DO UPDATE reads the latest committed TAT, so concurrent decisions on one key queue on the row and
 * each sees the one before it: no two take the last request. A refusal writes too (the TAT it keeps
 * and `allowed = false`), which is how the same statement can report it.
 *
 * @example
 * const store = new PostgresRateLimitStore(new pg.Pool({ connectionString: process.env.DATABASE_URL }));
 */
export class PostgresRateLimitStore implements RateLimitStore {
  readonly table: string;
  private readonly client: SqlClient;
  private readonly takeSql: string;

  constructor(client: SqlClient, options: PostgresRateLimitStoreOptions = {}) {
    this.client = client;
    this.table = checkTableName(options.table ?? DEFAULT_RATE_LIMIT_TABLE);
    // $2 interval, $3 capacity (µs). `tat` is today's debt, clamped to a full burst from now (a TAT
    // beyond it means the clock stepped back); `paid` is the TAT after paying one interval on it.
    const now = `(SELECT now_us FROM clock)`;
    const tat = `least(greatest(r.tat_us, ${now}), ${now} + $3::bigint)`;
    const paid = `${tat} + $2::bigint`;
    const fits = `${paid} - ${now} <= $3::bigint`;
    this.takeSql = `WITH clock AS (SELECT floor(extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS now_us)
INSERT INTO ${this.table} AS r (key, tat_us, allowed)
SELECT $1, now_us + $2::bigint, true FROM clock
ON CONFLICT (key) DO UPDATE SET
  tat_us = CASE WHEN ${fits} THEN ${paid} ELSE ${tat} END,
  allowed = ${fits}
RETURNING allowed, tat_us, ${now} AS now_us`;
  }

  /** Creates the table if it is missing (tests, quick starts; production uses `blocks migrate`). */
  async createSchema(): Promise<void> {
    for (const statement of schemaStatements(this.table)) await this.client.query(statement);
  }

  async take(key: string, rate: GcraRate): Promise<StoreDecision> {
    const { rows } = await this.client.query(this.takeSql, [key, rate.intervalUs, rate.capacityUs]);
    const row = rows[0] as Row;
    return { allowed: row.allowed, tat: Number(row.tat_us), now: Number(row.now_us) };
  }

  /**
   * Deletes up to `limit` keys whose debt is paid (they mean a full quota, present or not).
   * Run it from a job; a key taken meanwhile is skipped, never deleted with fresh debt.
   */
  async cleanup({ limit = 1000 }: { limit?: number } = {}): Promise<number> {
    const { rows } = await this.client.query(
      `WITH stale AS (
         SELECT key FROM ${this.table}
         WHERE tat_us < floor(extract(epoch FROM clock_timestamp()) * 1000000)::bigint
         ORDER BY tat_us LIMIT $1 FOR UPDATE SKIP LOCKED
       ), deleted AS (
         DELETE FROM ${this.table} t USING stale WHERE t.key = stale.key RETURNING 1
       )
       SELECT count(*)::int AS deleted FROM deleted`,
      [limit],
    );
    return (rows[0] as { deleted: number }).deleted;
  }
}
