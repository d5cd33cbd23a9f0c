import { expect, it } from "vitest";
import type { RateLimitDecision } from "../types";
import { rateLimitHeaders } from "./headers";

const policy = { name: "payments", limit: 10, windowMs: 60_000 };
const base: RateLimitDecision = {
  allowed: true,
  policy,
  remaining: 7,
  resetMs: 17_200,
  nextMs: 5_200,
  retryAfterMs: 0,
  counted: true,
  banned: false,
};

it("writes RateLimit-Policy and RateLimit in the IETF draft's structured-field syntax", () => {
  expect(rateLimitHeaders(base)).toEqual({
    "ratelimit-policy": '"payments";q=10;w=60',
    ratelimit: '"payments";r=7;t=6',
  });
});

it("t is the effective window of draft -11: until one more request comes back, never after Retry-After", () => {
  const refused = { ...base, allowed: false, remaining: 0, nextMs: 1_500, retryAfterMs: 1_500 };
  expect(rateLimitHeaders(refused)).toMatchObject({ ratelimit: '"payments";r=0;t=2', "retry-after": "2" });
});

it("adds Retry-After in whole seconds, at least 1, when refused", () => {
  expect(rateLimitHeaders({ ...base, allowed: false, remaining: 0, retryAfterMs: 1_500 })["retry-after"]).toBe("2");
  expect(rateLimitHeaders({ ...base, allowed: false, remaining: 0, retryAfterMs: 3 })["retry-after"]).toBe("1");
});

it("says nothing about a quota it did not count (store down, failing open)", () => {
  expect(rateLimitHeaders({ ...base, counted: false })).toEqual({});
});
