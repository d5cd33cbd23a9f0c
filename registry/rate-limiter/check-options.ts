// What one check takes beside the policy: a cost and a limit of its own (checked on each call), and a key bounded in length.
import { createHash } from "node:crypto";
import type { RateLimitPolicy } from "./types";

/** Per request: `cost` units of the quota (default 1), under this caller's own `limit` (default the policy's). */
export type CheckOptions = { cost?: number | undefined; limit?: number | undefined };

export const NO_OPTIONS: CheckOptions = {};

/** Keys up to this length are kept as they come; longer ones by their hash. */
export const MAX_KEY_LENGTH = 200;

/** Throws a RangeError unless `cost` is a whole number of requests the policy can ever allow. */
export function checkCost(cost: number, policy: RateLimitPolicy): number {
  if (!Number.isSafeInteger(cost) || cost < 1 || cost > policy.limit) {
    throw new RangeError(`rate-limiter: cost ${cost} must be an integer from 1 to the limit (${policy.limit}).`);
  }
  return cost;
}

/**
 * Keys come from clients (an `Idempotency-Key` header can be kilobytes): one longer than
 * MAX_KEY_LENGTH is replaced by its SHA-256 (the limiter calls this only for those), so no store
 * holds unbounded keys and PostgreSQL's index never refuses one (which would fail open: a way around the limit).
 *
 * @example
 * boundedKey("k".repeat(5_000)); // "sha256:5f0c..."
 */
export function boundedKey(key: string): string {
  return `sha256:${createHash("sha256").update(key).digest("hex")}`;
}
