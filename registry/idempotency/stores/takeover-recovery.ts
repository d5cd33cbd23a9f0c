// Recovery of stuck records by takeover, for stores that cannot lock a batch and settle it in one
// statement as PostgreSQL does (MySQL, SQLite): one home for the rule that keeps runners apart.
import { randomUUID } from "node:crypto";
import type { IdempotencyScope, RecoveredRecord, RecoverInput } from "../types";

/** A PROCESSING record past the recovery window, as the store selected it. */
export type StuckRecord = IdempotencyScope & { token: string };

/** What recovery needs of the store besides the contract's own fenced methods. */
export type TakeoverStore = {
  /**
   * Moves `stuck` to the `recovery` token and a fresh `updated_at`, only if it still holds
   * `stuck.token`, is PROCESSING and is older than the window; true when it did.
   */
  takeOver(stuck: StuckRecord, recovery: string, olderThanMs: number): Promise<boolean>;
  incrementRetryCount(scope: IdempotencyScope, ttlMs: number): Promise<number>;
  markFailed(scope: IdempotencyScope, token: string, ttlMs: number): Promise<boolean>;
  release(scope: IdempotencyScope, token: string): Promise<boolean>;
};

/**
 * Takes each record over with a token of its own and a fresh `updated_at` before counting it: a
 * worker that renewed its lease in between keeps its record, and another recovery runner can neither
 * select it again nor take it over (it would have to match our token), so no record is counted twice.
 */
export async function recoverByTakeover(
  store: TakeoverStore,
  stuck: StuckRecord[],
  { olderThanMs, maxRetries, ttlMs }: RecoverInput,
): Promise<RecoveredRecord[]> {
  const recovered: RecoveredRecord[] = [];
  for (const record of stuck) {
    const recovery = randomUUID();
    if (!(await store.takeOver(record, recovery, olderThanMs))) continue;
    const scope = { operation: record.operation, userId: record.userId, key: record.key };
    const retryCount = await store.incrementRetryCount(scope, ttlMs);
    const poisoned = retryCount >= maxRetries;
    if (poisoned) await store.markFailed(scope, recovery, ttlMs);
    else await store.release(scope, recovery);
    recovered.push({ ...scope, retryCount, poisoned });
  }
  return recovered;
}
