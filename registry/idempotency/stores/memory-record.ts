// How MemoryStore keeps a record so that what it hands out can never change what it keeps, without a copy per call.
import type { IdempotencyRecord } from "../types";

/**
 * A Date whose setters throw. A stored record shares its dates with every record handed out, so a
 * caller's `record.expiresAt.setTime(0)` must not move the stored expiry (with a plain Date it did).
 */
export class FixedDate extends Date {}
for (const name of Object.getOwnPropertyNames(Date.prototype)) {
  if (!name.startsWith("set")) continue;
  Object.defineProperty(FixedDate.prototype, name, {
    value(): never {
      throw new TypeError(`MemoryStore: a record's dates cannot be changed (Date.prototype.${name}); copy it first: new Date(date).`);
    },
  });
}

/**
 * The stored record itself, frozen: a replay reads it without a copy, and a caller can change neither
 * it nor its dates. Freezing is once per record; the store then writes to a copy (see `writable`).
 */
export function handOut(record: IdempotencyRecord): IdempotencyRecord {
  return Object.freeze(record);
}

/** The record to write to: itself, or (once it was handed out) a copy that replaces it under `recordId`. */
export function writable(records: Map<string, IdempotencyRecord>, recordId: string, record: IdempotencyRecord): IdempotencyRecord {
  if (!Object.isFrozen(record)) return record;
  const copy = { ...record };
  records.set(recordId, copy);
  return copy;
}
