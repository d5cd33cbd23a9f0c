// GCRA (the generic cell rate algorithm): the one decision rule every store applies, and what a decision means.
import type { GcraRate, RateLimitDecision, RateLimitPolicy, StoreDecision } from "./types";

/**
 * Whole milliseconds, so Lua (doubles) and SQL (BIGINT) compute exactly what this file does. The
 * interval rounds up: a policy is never looser than written (10 per 1001 ms becomes 10 per 1010 ms).
 *
 * @example
 * rateOf({ name: "default", limit: 10, windowMs: 60_000 }); // { intervalMs: 6000, capacityMs: 60000 }
 */
export function rateOf(policy: RateLimitPolicy): GcraRate {
  const intervalMs = Math.ceil(policy.windowMs / policy.limit);
  return { intervalMs, capacityMs: intervalMs * policy.limit };
}

/**
 * One attempt: pay `intervalMs` on top of the debt still standing (`tat - now`), unless that would
 * exceed the capacity. The Redis script and the PostgreSQL statement are this function, translated.
 */
export function gcraStep(storedTat: number | undefined, now: number, rate: GcraRate): StoreDecision {
  const tat = Math.max(storedTat ?? now, now);
  const next = tat + rate.intervalMs;
  if (next - now > rate.capacityMs) return { allowed: false, tat, now };
  return { allowed: true, tat: next, now };
}

/**
 * Turns a store's answer into remaining requests and waits, on the store's clock.
 *
 * @example
 * decisionOf(policy, rate, await store.take(key, rate)); // { allowed, remaining, resetMs, retryAfterMs, ... }
 */
export function decisionOf(policy: RateLimitPolicy, rate: GcraRate, answer: StoreDecision): RateLimitDecision {
  const debt = Math.max(0, answer.tat - answer.now);
  const remaining = Math.floor((rate.capacityMs - debt) / rate.intervalMs);
  return {
    allowed: answer.allowed,
    policy,
    remaining: Math.min(policy.limit, Math.max(0, remaining)),
    resetMs: debt,
    retryAfterMs: answer.allowed ? 0 : Math.max(0, debt + rate.intervalMs - rate.capacityMs),
    counted: true,
  };
}

const POLICY_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** Throws on a policy the headers or the arithmetic cannot carry. */
export function checkPolicy(policy: RateLimitPolicy): RateLimitPolicy {
  if (!POLICY_NAME.test(policy.name)) {
    throw new Error(`Invalid rate-limit policy name "${policy.name}": use letters, digits, "_", "-" or "." (at most 64).`);
  }
  if (!Number.isSafeInteger(policy.limit) || policy.limit < 1) throw new Error(`Invalid rate limit ${policy.limit}: a positive integer.`);
  if (!Number.isSafeInteger(policy.windowMs) || policy.windowMs < 1) throw new Error(`Invalid windowMs ${policy.windowMs}: a positive integer.`);
  return policy;
}
