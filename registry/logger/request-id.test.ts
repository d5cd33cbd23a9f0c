import { describe, expect, it } from "vitest";
import { resolveRequestId } from "./request-id";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("resolveRequestId", () => {
  it.each([
    "req_01HZX3",
    "6f1c2b8e-1d2a-4c4e-9f0a-2b3c4d5e6f70",
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    "dGVzdA==",
    "a".repeat(128),
  ])("keeps the safe id %s", (id) => {
    expect(resolveRequestId(id)).toBe(id);
  });

  it.each([
    ["missing", undefined],
    ["empty", ""],
    ["too long", "a".repeat(129)],
    ["a newline (log injection)", 'abc\n{"level":"error"}'],
    ["spaces", "two words"],
    ["quotes", 'a"b'],
    ["a repeated header", ["a", "b"]],
    ["not a string", 42],
  ])("generates a UUID when the incoming id is %s", (_, incoming) => {
    expect(resolveRequestId(incoming)).toMatch(UUID);
  });

  it("uses the given generator", () => {
    expect(resolveRequestId(undefined, { generate: () => "req_custom" })).toBe("req_custom");
    expect(resolveRequestId("kept", { generate: () => "req_custom" })).toBe("kept");
  });
});
