import { describe, expect, it } from "vitest";
import { canonicalJson, hashPayload, sha256Hex } from "../fingerprint";
import { requestFingerprint, requestFingerprintJson } from "./request-fingerprint";

describe("the request hash", () => {
  // Keys already recorded carry these hashes: a change to the fingerprint or its canonical JSON would
  // answer their retries KEY_REUSED_WITH_DIFFERENT_REQUEST. Hostile inputs included (quotes, %FF, a lone surrogate, empty names).
  it.each([
    [
      "POST",
      "/payments",
      { amount: 5, currency: "EUR" },
      "489d810a2dfce129b9761ccce4570965d44c83b35e56b850c1075a357b6fce74",
    ],
    ["post", "/payments?b=2&a=1&a=0&c", undefined, "5f2430621dc33799df9b994ba59e848c2e47b90d6aa400b0837e291c91011436"],
    [
      "PUT",
      '/a"b\\c/%FF?x="y"&z=\u00e9&q=\ud800',
      "text body",
      "093c21580fd1f1d56f336c4ccc14ada095f942a4cf8e50ee9ab0a26bfadf5ac9",
    ],
    ["PATCH", "/p?=&&k=", [1, { b: null, a: "x" }], "ac703731ac672b38fcef2dcc66f53938739ab524b909f58d489fafa13c2eb01f"],
  ])("stays the same for %s %s", (method, url, body, hash) => {
    expect(hashPayload(requestFingerprint(method, url, body))).toBe(hash);
    // protectRoute's own way to the same hash: the canonical text written out directly.
    expect(requestFingerprintJson(method, url, body)).toBe(canonicalJson(requestFingerprint(method, url, body)));
    expect(sha256Hex(requestFingerprintJson(method, url, body))).toBe(hash);
  });
});
