// How MemoryStore keeps a record, and hands it out so that no caller can change what it keeps, without a copy per call.
import type { IdempotencyRecord, IdempotencyScope } from "../types";

/**
 * A Date whose setters throw. Every caller handed a record gets the same dates, so one caller's
 * `record.expiresAt.setTime(0)` must not change what the next one reads (with a plain Date it could
 * even move the stored expiry).
 */
export class FixedDate extends Date {}
for (const name of Object.getOwnPropertyNames(Date.prototype)) {
  if (!name.startsWith("set")) continue;
  Object.defineProperty(FixedDate.prototype, name, {
    value(): never {
      throw new TypeError(
        `MemoryStore: a record's dates cannot be changed (Date.prototype.${name}); copy it first: new Date(date).`,
      );
    },
  });
}

/**
 * A record as MemoryStore keeps it: its times as epoch milliseconds (a fresh request makes no Date,
 * and leaves less for the garbage collector), and the frozen record it last handed out.
 */
export type StoredRecord = Omit<IdempotencyRecord, "expiresAt" | "updatedAt" | "steps"> & {
  expiresAt: number;
  updatedAt: number;
  /** What `handOut` gave for the record as it is now; every write clears it. */
  view: IdempotencyRecord | undefined;
};

/**
 * The record as callers see it, frozen with dates that cannot change: made at its first hand-out
 * after a write, then the same object for every replay (no copy, no dates per call), so a caller
 * can change neither it nor what the store keeps.
 */
export function handOut(record: StoredRecord): IdempotencyRecord {
  record.view ??= Object.freeze({
    operation: record.operation,
    userId: record.userId,
    key: record.key,
    requestHash: record.requestHash,
    status: record.status,
    response: record.response,
    token: record.token,
    expiresAt: new FixedDate(record.expiresAt),
    updatedAt: new FixedDate(record.updatedAt),
  });
  return record.view;
}

/**
 * A record's id among its user's records (MemoryStore keeps one group per user): unambiguous (the operation
 * prefixed with its length), and cheaper than JSON of the two. Joined rather than concatenated: `+` and
 * template literals build a tree of cons strings that V8 keeps as it is when the string becomes a Map key,
 * and a store of 10 000 records kept half its memory in those trees.
 */
export function recordId({ operation, key }: IdempotencyScope): string {
  return [operation.length, ":", operation, key].join("");
}

/**
 * The same text as one flat string. `randomUUID()` builds its result by concatenation, a tree of a dozen
 * cons strings that every kept record would hold, and `JSON.stringify` builds a long result from parts
 * the same way; `trim()` flattens it, and returns the flat string itself when it removes nothing (the
 * length tells), so the text kept is always the text given.
 */
export function flat(text: string): string {
  const trimmed = text.trim();
  return trimmed.length === text.length ? trimmed : text;
}
