// cleanupOutbox: deletes published rows past their retention, one bounded batch, for a job of your own.
import { checkTableName, DEFAULT_OUTBOX_TABLE } from "./postgres-schema";
import { relayStatements } from "./relay-sql";
import { toSqlClient, type OutboxDatabase } from "./sql-client";

export type CleanupOutboxOptions = {
  /** @default "outbox_messages" */
  table?: string | undefined;
  /** @default 604800000 (7 days) */
  retentionMs?: number | undefined;
  /** @default 1000 */
  limit?: number | undefined;
};

/**
 * The relay runs this itself (`cleanupIntervalMs`); call it from a scheduled job instead when the
 * relays run with cleanup off. Returns how many rows it deleted: call again while it returns `limit`.
 * Dead rows are never deleted: they wait for you.
 *
 * @example
 * while ((await cleanupOutbox(pool, { limit: 1000 })) === 1000);
 */
export async function cleanupOutbox(db: OutboxDatabase, options: CleanupOutboxOptions = {}): Promise<number> {
  const sql = relayStatements(checkTableName(options.table ?? DEFAULT_OUTBOX_TABLE));
  const { rows } = await toSqlClient(db).query(sql.cleanup, [
    options.retentionMs ?? 7 * 24 * 3_600_000,
    options.limit ?? 1000,
  ]);
  return (rows[0] as { deleted: number }).deleted;
}
