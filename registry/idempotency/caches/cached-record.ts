// Checks a value read from a cache before the handler trusts it: a malformed one is a miss, never a 500.
import type { CachedRecord } from "../types";

/**
 * True for a completed record whose response is JSON text (or null). A cache is shared, outlives
 * deploys and can be written by anything holding its credentials: what it returns is input.
 *
 * @example
 * isCachedRecord({ requestHash: "ab12", status: "SUCCESS", response: '{"id":1}' }); // true
 * isCachedRecord({ status: "SUCCESS" }); // false
 */
export function isCachedRecord(value: unknown): value is CachedRecord {
  if (typeof value !== "object" || value === null) return false;
  const { requestHash, status, response } = value as Record<string, unknown>;
  if (typeof requestHash !== "string" || (status !== "SUCCESS" && status !== "FAILED")) return false;
  if (response === null) return true;
  if (typeof response !== "string") return false;
  try {
    JSON.parse(response);
    return true;
  } catch {
    return false;
  }
}
