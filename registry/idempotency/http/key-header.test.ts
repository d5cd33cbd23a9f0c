import { describe, expect, it } from "vitest";
import { parseIdempotencyKey } from "./key-header";

describe("parseIdempotencyKey", () => {
  it.each([
    ["a bare token", "8e03978e-40d5-43e8", "8e03978e-40d5-43e8"],
    ["a quoted string", '"8e03978e-40d5-43e8"', "8e03978e-40d5-43e8"],
    ["a quoted string with escapes", '"a\\"b\\\\c"', 'a"b\\c'],
    ["a quoted string holding a comma", '"a,b"', "a,b"],
    ["surrounding spaces and tabs", " \tkey-1\t ", "key-1"],
    ["a one-element array", ["key-1"], "key-1"],
    ["255 characters", "k".repeat(255), "k".repeat(255)],
  ])("reads %s", (_, header, key) => {
    expect(parseIdempotencyKey(header)).toBe(key);
  });

  it("returns undefined when there is no header", () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
    expect(parseIdempotencyKey(null)).toBeUndefined();
  });

  it.each([
    ["empty", ""],
    ["blank", "   "],
    ["256 characters", "k".repeat(256)],
    ["an inner space", "a b"],
    ["non-ASCII", "clé"],
    ["a control character", "a\u0001b"],
    ["repeats joined by a proxy", "key-1, key-2"],
    ["two quoted repeats", '"key-1", "key-2"'],
    ["a repeated header", ["key-1", "key-2"]],
    ["an unterminated quote", '"key-1'],
    ["a stray quote", 'key"1'],
    ["an unknown escape", '"a\\nb"'],
    ["a quoted space", '"a b"'],
    ["an RFC 8941 parameter", '"key-1";v=1'],
  ])("refuses %s with IDEMPOTENCY_KEY_INVALID", (_, header) => {
    expect(() => parseIdempotencyKey(header)).toThrow(expect.objectContaining({ code: "IDEMPOTENCY_KEY_INVALID" }));
  });
});
