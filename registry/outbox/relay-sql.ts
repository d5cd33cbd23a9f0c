// The relay's statements, each one round trip in autocommit: claim, mark published, record failures, cleanup, stats.
import { checkTableName } from "./postgres-schema";

export type RelayStatements = ReturnType<typeof relayStatements>;

/**
 * @example
 * const sql = relayStatements("outbox_messages");
 * await db.query(sql.claim, [100, 60_000]);
 */
export function relayStatements(table: string) {
  checkTableName(table);
  const pending = "published_at IS NULL AND dead_at IS NULL";
  return {
    /**
     * $1 batch size, $2 lease (ms). `id = ANY(ARRAY(...))`, not a join: the planner hash-joins a join
     * against the whole table (a sequential scan per batch), while ANY looks each id up in the key. Takes due rows no other relay holds (SKIP LOCKED), and in the
     * same statement moves them out of reach until the lease ends and counts the attempt. Committed
     * before anything is published, so no transaction stays open across the broker's round trip; a
     * relay that scanned the old version re-checks it under the row lock and finds it not due.
     */
    claim: `UPDATE ${table} AS o
SET available_at = now() + $2::double precision * interval '1 millisecond', attempts = o.attempts + 1
WHERE o.id = ANY(ARRAY(
  SELECT id FROM ${table}
  WHERE ${pending} AND available_at <= now()
  ORDER BY available_at
  LIMIT $1
  FOR UPDATE SKIP LOCKED
))
RETURNING o.id, o.topic, o.key, o.payload, o.headers, o.attempts, o.created_at`,

    /** $1 ids. The first publish's time stays if a lease ran out and a second relay published too. */
    markPublished: `UPDATE ${table} SET published_at = now() WHERE id = ANY($1::uuid[]) AND published_at IS NULL`,

    /**
     * $1 ids, $2 errors, $3 the attempts each claim saw, $4 max attempts, $5 first backoff (ms),
     * $6 longest backoff (ms). Exponential backoff with jitter (half to all of the step), so rows
     * that failed together do not come back together. A row claimed again since (its lease ran out)
     * or published meanwhile is left alone: the newer claim decides.
     */
    recordFailures: `UPDATE ${table} AS o
SET last_error = f.error,
    dead_at = CASE WHEN o.attempts >= $4::int THEN now() END,
    available_at = now() + least($6::double precision, $5::double precision * power(2, o.attempts - 1)) * (0.5 + random() / 2) * interval '1 millisecond'
FROM unnest($1::uuid[], $2::text[], $3::int[]) AS f(id, error, attempts)
WHERE o.id = f.id AND o.attempts = f.attempts AND o.published_at IS NULL
RETURNING o.id, o.dead_at IS NOT NULL AS dead`,

    /** $1 retention (ms), $2 batch size. Bounded, walks the published index (ANY, as in the claim), and skips rows another relay is deleting. */
    cleanup: `WITH deleted AS (
  DELETE FROM ${table} WHERE id = ANY(ARRAY(
    SELECT id FROM ${table}
    WHERE published_at < now() - $1::double precision * interval '1 millisecond'
    ORDER BY published_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
  ))
  RETURNING 1
)
SELECT count(*)::int AS deleted FROM deleted`,

    /** The backlog and the age of its oldest message, for the gauges. */
    stats: `SELECT count(*)::int AS backlog,
  coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest_age_seconds
FROM ${table} WHERE ${pending}`,
  };
}
