// Recovery of DynamoDbStore's stuck records: the oldest heartbeats in each shard of the processing index, each claimed before it is counted.
import { randomUUID } from "node:crypto";
import { QueryCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { IdempotencyScope, IdempotencyStore, RecoveredRecord } from "../types";
import { fromKey, pick, type Item } from "./dynamodb-items";
import { PROCESSING_INDEX } from "./dynamodb-table";

/** A PROCESSING record as the sparse index holds it. */
export type StuckItem = Pick<Item, "pk" | "token" | "updatedAt">;

/** What recovery needs of the store besides the contract's own fenced methods. */
export type ClaimingStore = Pick<IdempotencyStore, "incrementRetryCount" | "markFailed" | "release"> & {
  /** Moves the record `token` holds to the `claim` token and a fresh heartbeat, only if its heartbeat is older than `cutoff`. */
  claim(scope: IdempotencyScope, token: string, claim: string, cutoff: number): Promise<boolean>;
};

/** The `limit` oldest heartbeats before `cutoff` in all the index's `shards`: one bounded Query per shard. */
export async function oldestStuck(
  db: DynamoDBDocumentClient,
  table: string,
  shards: number,
  cutoff: number,
  limit: number,
): Promise<StuckItem[]> {
  const pages = await Promise.all(
    Array.from({ length: shards }, (_, shard) =>
      db.send(
        new QueryCommand({
          TableName: table,
          IndexName: PROCESSING_INDEX,
          Limit: limit,
          KeyConditionExpression: "#shard = :shard AND #updatedAt < :cutoff",
          ExpressionAttributeNames: pick("#shard", "#updatedAt"),
          ExpressionAttributeValues: { ":shard": shard, ":cutoff": cutoff },
        }),
      ),
    ),
  );
  return pages
    .flatMap((page) => (page.Items ?? []) as StuckItem[])
    .sort((a, b) => a.updatedAt - b.updatedAt)
    .slice(0, limit);
}

/**
 * Claims `item` with a new token (its stale owner is fenced off, and a concurrent recovery's claim fails),
 * then counts the retry and poisons or frees it. A crash after the claim leaves it PROCESSING in the index:
 * a later run recovers it again.
 */
export async function recoverOne(
  store: ClaimingStore,
  item: StuckItem,
  cutoff: number,
  maxRetries: number,
  ttlMs: number,
): Promise<RecoveredRecord | undefined> {
  const scope = fromKey(item.pk);
  const claim = randomUUID();
  if (!(await store.claim(scope, item.token, claim, cutoff))) return undefined;
  const retryCount = await store.incrementRetryCount(scope, ttlMs);
  const poisoned = retryCount >= maxRetries;
  if (poisoned) await store.markFailed(scope, claim, ttlMs);
  else await store.release(scope, claim);
  return { ...scope, retryCount, poisoned };
}
