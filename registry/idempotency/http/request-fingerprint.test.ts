import { describe, expect, it } from "vitest";
import { hashPayload } from "../fingerprint";
import { requestFingerprint, requestHash } from "./request-fingerprint";

describe("requestHash", () => {
  // Keys recorded before it existed were hashed the generic way: a request must keep its hash.
  it.each([
    ["POST", "/payments", { amount: 5, currency: "EUR" }],
    ["post", "/payments?b=2&a=1&a=0&c", undefined],
    ["PUT", '/a"b\\c/%FF?x="y"&z=\u00e9&q=\ud800', "text body"],
    ["PATCH", "/p?=&&k=", [1, { b: null, a: "x" }]],
  ])("equals the hash of requestFingerprint (%s %s)", (method, url, body) => {
    expect(requestHash(method, url, body)).toBe(hashPayload(requestFingerprint(method, url, body)));
  });
});
