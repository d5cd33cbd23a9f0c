import { expect, it } from "vitest";
import type { RateLimitDecision } from "../types";
import { rateLimitHeaders } from "./headers";

const policy = { name: "payments", limit: 10, windowMs: 60_000 };
const base: RateLimitDecision = { allowed: true, policy, remaining: 7, resetMs: 17_200, retryAfterMs: 0, counted: true, banned: false };

it("writes RateLimit-Policy and RateLimit in the IETF draft's structured-field syntax", () => {
  expect(rateLimitHeaders(base)).toEqual({ "RateLimit-Policy": '"payments";q=10;w=60', RateLimit: '"payments";r=7;t=18' });
});

it("adds Retry-After in whole seconds, at least 1, when refused", () => {
  expect(rateLimitHeaders({ ...base, allowed: false, remaining: 0, retryAfterMs: 1_500 })["Retry-After"]).toBe("2");
  expect(rateLimitHeaders({ ...base, allowed: false, remaining: 0, retryAfterMs: 3 })["Retry-After"]).toBe("1");
});

it("says nothing about a quota it did not count (store down, failing open)", () => {
  expect(rateLimitHeaders({ ...base, counted: false })).toEqual({});
});
