// GCRA (the generic cell rate algorithm): the one decision rule every store applies, and what a decision means.
import type { GcraRate, RateLimitDecision, RateLimitPolicy, StoreDecision } from "./types";

/**
 * Whole microseconds, so Lua (doubles, exact below 2^53) and SQL (BIGINT) compute exactly what this
 * file does, and rates above one request per millisecond keep their interval (2000 per second is
 * 500 µs, not 1 ms). The interval rounds up: a policy is never looser than written, by at most 1 µs
 * a request.
 *
 * @example
 * rateOf({ name: "default", limit: 10, windowMs: 60_000 }); // { intervalUs: 6_000_000, capacityUs: 60_000_000 }
 */
export function rateOf(policy: RateLimitPolicy): GcraRate {
  const intervalUs = Math.ceil((policy.windowMs * 1000) / policy.limit);
  return { intervalUs, capacityUs: intervalUs * policy.limit };
}

/**
 * One attempt: pay `intervalUs` on top of the debt still standing (`tat - now`), unless that would
 * exceed the capacity. A debt above the capacity cannot come from GCRA itself: the clock stepped
 * back (or the policy got stricter), and the TAT is clamped to a full burst from now, so a step back
 * costs a key one interval, never the whole step. The Redis script and the PostgreSQL statement are
 * this function, translated.
 */
export function gcraStep(storedTat: number | undefined, now: number, rate: GcraRate): StoreDecision {
  const tat = Math.min(Math.max(storedTat ?? now, now), now + rate.capacityUs);
  const next = tat + rate.intervalUs;
  if (next - now > rate.capacityUs) return { allowed: false, tat, now };
  return { allowed: true, tat: next, now };
}

/**
 * The rate a request of `cost` units takes: it pays `cost` intervals at once, within the same
 * capacity. Stores need nothing else to count costs.
 *
 * @example
 * costRate(rateOf({ name: "p", limit: 10, windowMs: 1_000 }), 3); // { intervalUs: 300_000, capacityUs: 1_000_000 }
 */
export function costRate(rate: GcraRate, cost: number): GcraRate {
  return cost === 1 ? rate : { intervalUs: rate.intervalUs * cost, capacityUs: rate.capacityUs };
}

/**
 * Turns a store's answer (µs) for a request of `cost` into remaining requests and waits (ms), on the store's clock.
 *
 * @example
 * decisionOf(policy, rate, await store.take(key, rate)); // { allowed, remaining, resetMs, retryAfterMs, ... }
 */
export function decisionOf(
  policy: RateLimitPolicy,
  rate: GcraRate,
  answer: StoreDecision,
  cost = 1,
): RateLimitDecision {
  const debt = Math.max(0, answer.tat - answer.now);
  const remaining = Math.min(policy.limit, Math.max(0, Math.floor((rate.capacityUs - debt) / rate.intervalUs)));
  return {
    allowed: answer.allowed,
    policy,
    remaining,
    resetMs: Math.ceil(debt / 1000),
    // The debt falls continuously; one more request fits once it is one interval lower than now.
    nextMs: Math.ceil(Math.max(0, debt + (remaining + 1) * rate.intervalUs - rate.capacityUs) / 1000),
    retryAfterMs: answer.allowed ? 0 : Math.ceil(Math.max(0, debt + rate.intervalUs * cost - rate.capacityUs) / 1000),
    counted: true,
    banned: false,
  };
}

const POLICY_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
/** A year: TATs in µs since the epoch plus a window stay far below 2^53, where doubles stop being exact. */
const MAX_WINDOW_MS = 366 * 24 * 3_600_000;

/** Throws on a policy the headers or the arithmetic cannot carry. */
export function checkPolicy(policy: RateLimitPolicy): RateLimitPolicy {
  if (!POLICY_NAME.test(policy.name)) {
    throw new Error(
      `Invalid rate-limit policy name "${policy.name}": use letters, digits, "_", "-" or "." (at most 64).`,
    );
  }
  if (!Number.isSafeInteger(policy.limit) || policy.limit < 1)
    throw new Error(`Invalid rate limit ${policy.limit}: a positive integer.`);
  if (!Number.isSafeInteger(policy.windowMs) || policy.windowMs < 1 || policy.windowMs > MAX_WINDOW_MS) {
    throw new Error(`Invalid windowMs ${policy.windowMs}: a positive integer of at most ${MAX_WINDOW_MS} (366 days).`);
  }
  if (policy.limit > policy.windowMs * 1000) {
    throw new Error(
      `Invalid rate ${policy.limit} per ${policy.windowMs} ms: at most one request per microsecond (limit <= windowMs * 1000).`,
    );
  }
  return policy;
}
