import { expect, it } from "vitest";
import { idempotencyKeyOf } from "./idempotency-key";

it('reads K and "K" (RFC 8941 string) as one key, as the idempotency block does', () => {
  expect(idempotencyKeyOf("k-1")).toBe("k-1");
  expect(idempotencyKeyOf('"k-1"')).toBe("k-1");
  expect(idempotencyKeyOf(' "k\\"1" ')).toBe('k"1');
  expect(idempotencyKeyOf(undefined)).toBeUndefined();
});

it("answers null for what the idempotency block refuses: repeats, stray quotes, too long, invisible", () => {
  for (const header of ["a, b", 'a"b', "k".repeat(256), "", "ü"]) expect(idempotencyKeyOf(header)).toBeNull();
});
