import { expect, it } from "vitest";
import { pickRequestId } from "./request-id";

it("takes the first usable id: a safe string or a number", () => {
  expect(pickRequestId(undefined, "req_01HZX", "later")).toBe("req_01HZX");
  expect(pickRequestId(undefined, 42)).toBe("42");
});

it("skips ids a client could forge log lines with, and makes one when nothing is usable", () => {
  expect(pickRequestId("a\nfake log line", ["req_1", "req_2"], "x".repeat(129), "<script>")).toMatch(/^[0-9a-f-]{36}$/);
  expect(pickRequestId()).toMatch(/^[0-9a-f-]{36}$/);
});
