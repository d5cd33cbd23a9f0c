// Standard Webhooks verification on the specification's own example, and each way a delivery is refused.
import { describe, expect, it } from "vitest";
import { signingKeys, verifyStandardWebhook } from "./standard-webhooks";

// The example of the Standard Webhooks specification (and its reference libraries' tests).
const keys = signingKeys("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
const body = '{"test": 2432232314}';
const headers = {
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: "1614265330",
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};
const at = { nowSeconds: 1614265330 };

describe("verifyStandardWebhook", () => {
  it("accepts the specification's example, alone or among other signatures, under a rotated secret list", () => {
    expect(() => verifyStandardWebhook(headers, body, keys, at)).not.toThrow();
    const both = [...signingKeys("whsec_c2VjcmV0LW9mLWxhc3QteWVhci0xMjM0NTY3OA=="), ...keys];
    expect(() =>
      verifyStandardWebhook(
        { ...headers, signature: `v1,bm9wZQ== v2,x ${headers.signature}` },
        Buffer.from(body),
        both,
        at,
      ),
    ).not.toThrow();
  });

  it.each([
    ["a changed body", { headers, body: '{"test": 2432232315}', now: at.nowSeconds }, /No webhook-signature matches/],
    [
      "a changed id",
      { headers: { ...headers, id: "msg_other" }, body, now: at.nowSeconds },
      /No webhook-signature matches/,
    ],
    ["no signature", { headers: { ...headers, signature: "" }, body, now: at.nowSeconds }, /Missing/],
    [
      "a timestamp that is not seconds",
      { headers: { ...headers, timestamp: "1614265330.5" }, body, now: at.nowSeconds },
      /not a number of seconds/,
    ],
    ["5 minutes and 1 second late", { headers, body, now: at.nowSeconds + 301 }, /too old/],
    ["5 minutes and 1 second early", { headers, body, now: at.nowSeconds - 301 }, /in the future/],
  ])("refuses %s", (_, { headers: h, body: b, now }, reason) => {
    expect(() => verifyStandardWebhook(h, b, keys, { nowSeconds: now })).toThrow(reason);
  });

  it("accepts exactly 5 minutes either way", () => {
    expect(() => verifyStandardWebhook(headers, body, keys, { nowSeconds: at.nowSeconds + 300 })).not.toThrow();
    expect(() => verifyStandardWebhook(headers, body, keys, { nowSeconds: at.nowSeconds - 300 })).not.toThrow();
  });
});
