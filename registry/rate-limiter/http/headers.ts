// The response headers of a decision: Retry-After and the IETF RateLimit-Policy / RateLimit fields.
import type { RateLimitDecision, RateLimitPolicy } from "../types";

/**
 * `RateLimit-Policy` as in draft-ietf-httpapi-ratelimit-headers-11: a structured-field list item,
 * the policy name as a string, `q` its quota and `w` its window in seconds.
 *
 * @example
 * formatRateLimitPolicy({ name: "default", limit: 10, windowMs: 60_000 }); // '"default";q=10;w=60'
 */
export function formatRateLimitPolicy(policy: RateLimitPolicy): string {
  let field = policyFields.get(policy);
  if (field === undefined) {
    field = `"${policy.name}";q=${policy.limit};w=${Math.max(1, Math.round(policy.windowMs / 1000))}`;
    policyFields.set(policy, field);
  }
  return field;
}

/** A limiter's policies are the same few objects on every response: each one's field is built once. */
const policyFields = new WeakMap<RateLimitPolicy, string>();

/**
 * `RateLimit`: `r` requests remain, and `t` is the draft's effective window: the seconds within
 * which the caller can use no more than `r`. GCRA refills continuously, so that is until the next
 * request comes back, and on a refusal it equals `Retry-After` (the draft asks that Retry-After
 * never end before the effective window).
 *
 * @example
 * formatRateLimit(decision); // '"default";r=7;t=6'
 */
export function formatRateLimit(decision: RateLimitDecision): string {
  return `"${decision.policy.name}";r=${decision.remaining};t=${Math.ceil(decision.nextMs / 1000)}`;
}

/**
 * Seconds a refused client should wait: never 0, which would invite an immediate retry.
 *
 * @example
 * retryAfterSeconds({ ...decision, retryAfterMs: 1_500 }); // 2
 */
export function retryAfterSeconds(decision: RateLimitDecision): number {
  return Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
}

/**
 * The headers to send with a response. A request let through uncounted (store down, fail open)
 * gets none: the limiter knows nothing true to say about the quota.
 *
 * Names are in lower case, as HTTP/2 sends them (HTTP field names are case-insensitive): Node's
 * `setHeader`, Fastify's `reply.header` and fetch's `Headers` lower-case every name they are given,
 * which for a name that is not already lower case is a new string, looked up again, on every response.
 *
 * @example
 * res.set(rateLimitHeaders(await limiter.check(key))); // ratelimit-policy, ratelimit (+ retry-after when refused)
 */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  if (!decision.counted) return {};
  const headers: Record<string, string> = {
    "ratelimit-policy": formatRateLimitPolicy(decision.policy),
    ratelimit: formatRateLimit(decision),
  };
  if (!decision.allowed) headers["retry-after"] = String(retryAfterSeconds(decision));
  return headers;
}

/**
 * The value to send for one of our headers when the response may already carry it: `RateLimit-Policy`
 * and `RateLimit` are lists in the draft (one item per policy), so a second limiter on the route adds
 * its item after the first's instead of replacing it. `Retry-After` is one value: the refusal's.
 *
 * @example
 * res.setHeader(name, fieldValue(name, value, res.getHeader(name))); // '"burst";q=10;w=1, "daily";q=1000;w=86400'
 */
export function fieldValue(name: string, value: string, previous: HeaderValue): string {
  if (previous === undefined || previous === "" || name === "retry-after") return value;
  const items =
    typeof previous === "string" ? previous : typeof previous === "number" ? String(previous) : previous.join(", ");
  return `${items}, ${value}`;
}

/** A header as Node's `getHeader`, Fastify's `reply.getHeader` and Koa's `ctx.response.get` return it. */
type HeaderValue = string | number | readonly string[] | undefined;

/** `fieldValue` for a fetch `Headers`, whose `append` joins a list field's items itself. */
export function addField(headers: Headers, name: string, value: string): void {
  if (name === "retry-after") headers.set(name, value);
  else headers.append(name, value);
}
