// The request fingerprint: canonical, stable across key order, bounded in depth.
import { describe, expect, it } from "vitest";
import { canonicalJson, hashPayload } from "./fingerprint";

describe("canonicalJson", () => {
  it("sorts object keys at every level and keeps array order", () => {
    expect(canonicalJson({ b: 1, a: [3, { d: 4, c: 5 }] })).toBe('{"a":[3,{"c":5,"d":4}],"b":1}');
  });

  it("follows JSON.stringify for dates, undefined, functions and non-finite numbers", () => {
    expect(canonicalJson({ at: new Date(0), gone: undefined, fn: () => 1, n: NaN, list: [undefined] })).toBe(
      '{"at":"1970-01-01T00:00:00.000Z","list":[null],"n":null}',
    );
    expect(canonicalJson(undefined)).toBe("null");
  });

  it("keeps unicode and escapes exactly as JSON does", () => {
    expect(canonicalJson({ é: '☕\n"' })).toBe(JSON.stringify({ é: '☕\n"' }));
  });
});

describe("hashPayload", () => {
  it("gives the same hash whatever the key order, and a different one for a different value", () => {
    expect(hashPayload({ amount: 1, currency: "EUR" })).toBe(hashPayload({ currency: "EUR", amount: 1 }));
    expect(hashPayload({ amount: 1 })).not.toBe(hashPayload({ amount: 2 }));
    expect(hashPayload({ amount: 1 })).toMatch(/^[0-9a-f]{64}$/);
  });

  it("refuses circular payloads with a clear error instead of overflowing the stack", () => {
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    expect(() => hashPayload(loop)).toThrow(/nested deeper than 256 levels \(or is circular\)/);
  });
});
