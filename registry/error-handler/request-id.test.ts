import { expect, it } from "vitest";
import { pickRequestId, randomRequestId } from "./request-id";

it("takes the first usable id: a safe string or a number", () => {
  expect(pickRequestId(undefined, "req_01HZX", "later")).toBe("req_01HZX");
  expect(pickRequestId(undefined, 42)).toBe("42");
});

it("skips ids a client could forge log lines with, and makes one when nothing is usable", () => {
  expect(pickRequestId("a\nfake log line", ["req_1", "req_2"], "x".repeat(129), "<script>")).toMatch(/^[0-9a-f-]{36}$/);
  expect(pickRequestId()).toMatch(/^[0-9a-f-]{36}$/);
});

it("makes random version 4 UUIDs, each one new", () => {
  const ids = Array.from({ length: 1_000 }, () => randomRequestId());
  for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(new Set(ids).size).toBe(ids.length);
  // Every hex digit shows up in every random position: the bytes are spread over the whole id.
  for (const at of [0, 7, 9, 15, 20, 35]) expect(new Set(ids.map((id) => id[at])).size).toBe(16);
});
