// RateLimiter: one policy over one store, bounded in time and in calls per key, with an insurance limiter, a block cache and bans.
import { createHash } from "node:crypto";
import { BlockCache } from "./block-cache";
import { RateLimitError } from "./errors";
import { checkPolicy, costRate, decisionOf, gcraStep, rateOf } from "./gcra";
import { checkOptions, type CheckedOptions, type RateLimiterOptions } from "./limiter-options";
import { errorSummary } from "./error-summary";
import { consoleLogger } from "./logger";
import { noopMetrics } from "./metrics";
import { Observer } from "./observer";
import { rateLimitedError } from "./refusals";
import { MemoryRateLimitStore } from "./stores/memory-store";
import type { GcraRate, RateLimitDecision, RateLimitPolicy, RateLimitStore, StoreDecision } from "./types";
import { TimeLimit, TimeoutError } from "./utils/time-limit";

export type { BanOptions, OnStoreError, RateLimiterOptions } from "./limiter-options";
export { rateLimitedError } from "./refusals";

/** Per request: `cost` units of the quota (default 1), under this caller's own `limit` (default the policy's). */
export type CheckOptions = { cost?: number | undefined; limit?: number | undefined };

/** `keyPrefix`: the policy's namespace in the store ("name:"), made once. */
type Policy = { policy: RateLimitPolicy; rate: GcraRate; keyPrefix: string };

/** A key's store calls (in cost units) still waiting. */
type InFlight = { pending: number };

const NO_OPTIONS: CheckOptions = {};

/**
 * @example
 * const limiter = new RateLimiter(new RedisRateLimitStore(redis), { name: "payments", limit: 10, windowMs: 60_000, logger });
 * const decision = await limiter.check(`user:${userId}`);
 * if (!decision.allowed) return res.status(429).set(rateLimitHeaders(decision)).end();
 */
export class RateLimiter {
  readonly policy: RateLimitPolicy;
  private readonly store: RateLimitStore;
  private readonly options: CheckedOptions;
  private readonly policies = new Map<number, Policy>();
  /** The policy of every check that names no limit of its own. */
  private readonly defaultPolicy: Policy;
  /** Store calls still waiting, by stored key. */
  private readonly inFlight = new Map<string, InFlight>();
  private pruneSlotsAt = MAX_IDLE_SLOTS;
  /** The same policy in this process's memory: shadows every allowed decision, decides when the store cannot. */
  private readonly insurance = new MemoryRateLimitStore();
  private readonly blocks = new BlockCache();
  /** Refusals per caller for the ban, in this process. */
  private readonly refusalCounts = new Map<string, number>();
  private readonly observer: Observer;
  /** One timer for every store call of this limiter, not one per call. */
  private readonly timeLimit: TimeLimit;
  private readonly labels: { policy: string };

  constructor(store: RateLimitStore, options: RateLimiterOptions) {
    this.options = checkOptions(options);
    this.store = store;
    this.policy = this.options.policy;
    this.defaultPolicy = policyEntry(this.policy);
    this.policies.set(this.policy.limit, this.defaultPolicy);
    this.timeLimit = new TimeLimit(this.options.timeoutMs, "rate-limit store");
    this.observer = new Observer(options.logger ?? consoleLogger, options.metrics ?? noopMetrics);
    this.labels = { policy: this.policy.name };
  }

  /**
   * Takes `cost` requests from `key`'s quota if they are left. Resolves with the decision, allowed
   * or not; rejects only when the store failed and `onStoreError` is `"deny"`.
   */
  async check(key: string, options: CheckOptions = NO_OPTIONS): Promise<RateLimitDecision> {
    const { policy, rate, keyPrefix } =
      options.limit === undefined ? this.defaultPolicy : this.policyFor(options.limit);
    const cost = options.cost === undefined ? 1 : checkCost(options.cost, policy);
    const logged = key.length <= MAX_KEY_LENGTH ? key : boundedKey(key);
    // The policy name (no ":" in it) namespaces the key: two policies on one store never share a bucket.
    const stored = keyPrefix + logged;
    // An empty cache (no caller refused lately, the usual case) costs no lookup.
    const blocked =
      this.blocks.size !== 0 && (this.options.blockCache || this.options.ban)
        ? this.blocks.blocked(stored, cost, policy.limit)
        : undefined;
    if (blocked)
      return this.refusedLocally(
        blocked.banned ? "banned" : "block_cached",
        policy,
        rate,
        logged,
        blocked.ms,
        cost,
        blocked.banned,
      );
    // One lookup per call: the key's slot is kept and updated in place until its calls are answered.
    let slot = this.inFlight.get(stored);
    if ((slot === undefined ? 0 : slot.pending) + cost > (this.options.maxInFlight ?? policy.limit)) {
      return this.refusedLocally(
        "in_flight_limited",
        policy,
        rate,
        logged,
        Math.ceil((rate.intervalUs * cost) / 1000),
        cost,
        false,
      );
    }
    if (slot === undefined) {
      slot = { pending: cost };
      this.addSlot(stored, slot);
    } else slot.pending += cost;
    const started = this.observer.metered ? performance.now() : 0;
    let call: Promise<StoreDecision>;
    try {
      call = this.store.take(stored, costRate(rate, cost));
    } catch (err) {
      // A store that throws instead of rejecting fails like any other: the insurance decides.
      call = Promise.reject(err as Error);
    }
    // The slot is free when the store answers, not when we stop waiting: a store that is slow for
    // one key never holds more than `maxInFlight` of its calls.
    const taken = slot;
    const release = () => this.release(taken, cost);
    let decision: RateLimitDecision;
    try {
      decision = decisionOf(policy, rate, await this.timeLimit.bound(call, release), cost);
    } catch (err) {
      decision = this.storeFailed(policy, rate, stored, logged, cost, err);
      return decision.allowed || !decision.counted ? decision : this.refused(decision, stored, logged, cost);
    }
    if (this.observer.metered)
      this.observer.observe("storeDuration", (performance.now() - started) / 1000, this.labels);
    if (!decision.allowed) {
      this.observer.decision("limited", {
        policy: policy.name,
        key: logged,
        remaining: decision.remaining,
        retryAfterMs: decision.retryAfterMs,
      });
      return this.refused(decision, stored, logged, cost);
    }
    // The insurance counted every request this process let through, those it decided itself while
    // the store failed or answered late included: a store that recovers (or was slow to connect)
    // never lets this process admit again what the insurance already admitted in the window.
    const shadow = this.insurance.takeNow(stored, costRate(rate, cost));
    if (!shadow.allowed) {
      const refusal = decisionOf(policy, rate, shadow, cost);
      this.observer.decision("limited", {
        policy: policy.name,
        key: logged,
        remaining: 0,
        retryAfterMs: refusal.retryAfterMs,
      });
      return this.refused(refusal, stored, logged, cost);
    }
    this.observer.allowed(policy.name, logged, decision.remaining);
    return decision;
  }

  /**
   * `check`, rejecting with `RATE_LIMITED` (or `RATE_LIMIT_BANNED`) when refused: for code outside
   * HTTP (jobs, queues), or routes that let the app's error handler answer.
   */
  async consume(key: string, options: CheckOptions = {}): Promise<RateLimitDecision> {
    const decision = await this.check(key, options);
    if (decision.allowed) return decision;
    throw rateLimitedError(decision);
  }

  private policyFor(limit: number): Policy {
    const known = this.policies.get(limit);
    if (known) return known;
    const entry = policyEntry(checkPolicy({ ...this.policy, limit }));
    // Per-caller limits are usually a few tiers; past that, compute each time rather than grow.
    if (this.policies.size < 100) this.policies.set(limit, entry);
    return entry;
  }

  private release(slot: InFlight, cost: number): void {
    slot.pending -= cost;
  }

  /**
   * A key's slot stays when its calls are answered: the next request of that caller finds it (a
   * map entry added and deleted per request cost more than the rest of the bookkeeping). Slots
   * with nothing waiting are dropped together once there are more than MAX_IDLE_SLOTS.
   */
  private addSlot(key: string, slot: InFlight): void {
    if (this.inFlight.size >= this.pruneSlotsAt) {
      for (const [held, { pending }] of this.inFlight) if (pending <= 0) this.inFlight.delete(held);
      // As many callers waiting at once: the next walk waits until there are twice as many slots.
      this.pruneSlotsAt = Math.max(MAX_IDLE_SLOTS, this.inFlight.size * 2);
    }
    this.inFlight.set(key, slot);
  }

  /** Remembers a refusal until its Retry-After, and counts it toward a ban. */
  private refused(decision: RateLimitDecision, stored: string, logged: string, cost: number): RateLimitDecision {
    if (this.options.blockCache) this.blocks.block(stored, decision.retryAfterMs, cost, decision.policy.limit);
    return this.countRefusal(decision, stored, logged, cost);
  }

  /**
   * Bans are per process, counted in its memory: a refusal of this process (from the store, the
   * block cache or the in-flight bound) costs no store round trip, and a ban then costs none either.
   */
  private countRefusal(decision: RateLimitDecision, stored: string, logged: string, cost: number): RateLimitDecision {
    const ban = this.options.ban;
    if (!ban) return decision;
    // "!" cannot occur in a policy name: the refusals never share a key with any policy's requests.
    const countKey = `${ban.refusals.name}!refusals:${logged}`;
    if (gcraTake(this.refusalCounts, countKey, rateOf(ban.refusals))) return decision;
    // A fresh count after the ban: its end is a new start, not an instant second ban.
    this.refusalCounts.delete(countKey);
    this.blocks.block(stored, ban.forMs, cost, decision.policy.limit, true);
    this.observer.decision("ban_started", { policy: decision.policy.name, key: logged, forMs: ban.forMs });
    return { ...decision, retryAfterMs: ban.forMs, banned: true };
  }

  private refusedLocally(
    outcome: "in_flight_limited" | "block_cached" | "banned",
    policy: RateLimitPolicy,
    rate: GcraRate,
    key: string,
    ms: number,
    cost: number,
    banned: boolean,
  ): RateLimitDecision {
    this.observer.decision(outcome, { policy: policy.name, key, retryAfterMs: ms });
    const resetMs = ms + Math.ceil((rate.capacityUs - rate.intervalUs * cost) / 1000);
    const decision = {
      allowed: false,
      policy,
      remaining: 0,
      resetMs,
      nextMs: ms,
      retryAfterMs: ms,
      counted: true,
      banned,
    };
    return banned ? decision : this.countRefusal(decision, `${policy.name}:${key}`, key, cost);
  }

  private storeFailed(
    policy: RateLimitPolicy,
    rate: GcraRate,
    stored: string,
    logged: string,
    cost: number,
    err: unknown,
  ): RateLimitDecision {
    const reason = err instanceof TimeoutError ? "timeout" : "error";
    this.observer.count("storeErrors", { policy: policy.name, reason });
    // Name, message and code only: driver errors can carry connection strings and request details.
    const fields = { policy: policy.name, key: logged, reason, err: errorSummary(err) };
    if (this.options.onStoreError === "insurance") {
      const decision = decisionOf(policy, rate, this.insurance.takeNow(stored, costRate(rate, cost)), cost);
      this.observer.decision(decision.allowed ? "insurance_allowed" : "insurance_limited", {
        ...fields,
        remaining: decision.remaining,
      });
      return decision;
    }
    if (this.options.onStoreError === "deny") {
      this.observer.decision("failed_closed", fields);
      throw new RateLimitError("RATE_LIMITER_UNAVAILABLE", "Rate limiting is unavailable: retry later.", {
        cause: err,
        retryAfterSeconds: 1,
        headers: { "Retry-After": "1" },
      });
    }
    this.observer.decision("failed_open", fields);
    return {
      allowed: true,
      policy,
      remaining: policy.limit,
      resetMs: 0,
      nextMs: 0,
      retryAfterMs: 0,
      counted: false,
      banned: false,
    };
  }
}

function policyEntry(policy: RateLimitPolicy): Policy {
  return { policy, rate: rateOf(policy), keyPrefix: `${policy.name}:` };
}

/** One GCRA step on a plain map (the refusal counts): true when it fits. */
function gcraTake(tats: Map<string, number>, key: string, rate: GcraRate): boolean {
  const now = Date.now() * 1000;
  const answer = gcraStep(tats.get(key), now, rate);
  tats.delete(key);
  if (answer.tat > now) tats.set(key, answer.tat);
  // Bounded like the memory store: the oldest count goes first.
  if (tats.size > 10_000) tats.delete(tats.keys().next().value as string);
  return answer.allowed;
}

function checkCost(cost: number, policy: RateLimitPolicy): number {
  if (!Number.isSafeInteger(cost) || cost < 1 || cost > policy.limit) {
    throw new RangeError(`rate-limiter: cost ${cost} must be an integer from 1 to the limit (${policy.limit}).`);
  }
  return cost;
}

const MAX_KEY_LENGTH = 200;
/** Callers whose in-flight slot is kept between their requests before the idle ones are dropped. */
const MAX_IDLE_SLOTS = 10_000;

/**
 * Keys come from clients (an `Idempotency-Key` header can be kilobytes): one longer than
 * MAX_KEY_LENGTH is replaced by its SHA-256 (`check` calls this only for those), so no store holds
 * unbounded keys and PostgreSQL's index never refuses one (which would fail open: a way around the limit).
 */
function boundedKey(key: string): string {
  return `sha256:${createHash("sha256").update(key).digest("hex")}`;
}
