// RateLimiter: one policy over one store, bounded in time and in calls per key, with an insurance limiter, a block cache and bans.
import { RefusalCounts } from "./bans";
import { BlockCache } from "./block-cache";
import { Callers, type Caller } from "./callers";
import { boundedKey, checkCost, MAX_KEY_LENGTH, NO_OPTIONS, type CheckOptions } from "./check-options";
import { RateLimitError, rejectedWith } from "./errors";
import { errorSummary } from "./error-summary";
import { checkPolicy, costRate, decisionOf, rateOf } from "./gcra";
import { checkOptions, type CheckedOptions, type RateLimiterOptions } from "./limiter-options";
import { consoleLogger } from "./logger";
import { noopMetrics } from "./metrics";
import { Observer } from "./observer";
import { rateLimitedError } from "./refusals";
import type { GcraRate, RateLimitDecision, RateLimitPolicy, RateLimitStore, StoreDecision } from "./types";
import { TimeLimit, TimeoutError } from "./utils/time-limit";

export type { CheckOptions } from "./check-options";
export type { BanOptions, OnStoreError, RateLimiterOptions } from "./limiter-options";
export { rateLimitedError } from "./refusals";

/** `keyPrefix`: the policy's namespace in the store ("name:"), made once. */
type Policy = { policy: RateLimitPolicy; rate: GcraRate; keyPrefix: string };

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
  // The limiter's own tables below are keyed by the caller's key alone: every policy of a limiter shares its name.
  /**
   * Per caller: its store calls waiting (the in-flight bound), and the insurance, the same policy in
   * this process's memory, which shadows every allowed decision and decides when the store cannot.
   */
  private readonly callers = new Callers();
  private readonly blocks = new BlockCache();
  /** Refusals per caller for the ban, in this process. */
  private readonly refusals: RefusalCounts | undefined;
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
    this.refusals = this.options.ban && new RefusalCounts(this.options.ban.refusals);
    this.timeLimit = new TimeLimit(this.options.timeoutMs, "rate-limit store");
    this.observer = new Observer(options.logger ?? consoleLogger, options.metrics ?? noopMetrics);
    this.labels = { policy: this.policy.name };
  }

  /**
   * Takes `cost` requests from `key`'s quota if they are left. Resolves with the decision, allowed
   * or not; rejects only when the store failed and `onStoreError` is `"deny"` (or on a wrong cost or limit).
   */
  check(key: string, options: CheckOptions = NO_OPTIONS): Promise<RateLimitDecision> {
    try {
      return this.decide(key, options);
    } catch (err) {
      return rejectedWith(err);
    }
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

  /** `check` without its promise around throws: no async function, as every request passes here. */
  private decide(key: string, options: CheckOptions): Promise<RateLimitDecision> {
    const entry = options.limit === undefined ? this.defaultPolicy : this.policyFor(options.limit);
    const { policy, rate } = entry;
    const cost = options.cost === undefined ? 1 : checkCost(options.cost, policy);
    const logged = key.length <= MAX_KEY_LENGTH ? key : boundedKey(key);
    // An empty cache (no caller refused lately, the usual case) costs no lookup.
    const blocked =
      this.blocks.size !== 0 && (this.options.blockCache || this.refusals)
        ? this.blocks.blocked(logged, cost, policy.limit)
        : undefined;
    if (blocked) {
      const outcome = blocked.banned ? "banned" : "block_cached";
      return Promise.resolve(this.refusedLocally(outcome, entry, logged, blocked.ms, cost, blocked.banned));
    }
    const caller = this.callers.take(logged, cost, this.options.maxInFlight ?? policy.limit);
    if (caller === undefined) {
      const ms = Math.ceil((rate.intervalUs * cost) / 1000);
      return Promise.resolve(this.refusedLocally("in_flight_limited", entry, logged, ms, cost, false));
    }
    const started = this.observer.metered ? performance.now() : 0;
    let call: Promise<StoreDecision>;
    try {
      // The policy name (no ":" in it) namespaces the key: two policies on one store never share a bucket.
      call = this.store.take(entry.keyPrefix + logged, costRate(rate, cost));
    } catch (err) {
      // A store that throws instead of rejecting fails like any other: the insurance decides.
      call = rejectedWith(err);
    }
    return new Promise<RateLimitDecision>((resolve) => {
      this.timeLimit.watch(call, {
        answered: (answer) => {
          try {
            resolve(this.answered(entry, caller, cost, answer, started));
          } catch (err) {
            resolve(rejectedWith(err));
          }
        },
        failed: (err) => {
          try {
            resolve(this.afterFailure(entry, caller, cost, err));
          } catch (failure) {
            resolve(rejectedWith(failure));
          }
        },
        // The slot is free when the store answers, not when we stop waiting: a store that is slow for
        // one key never holds more than `maxInFlight` of its calls.
        settled: () => this.callers.release(caller, cost),
      });
    });
  }

  /** The store answered in time: its decision, unless the insurance (this process's admissions) refuses it. */
  private answered(
    entry: Policy,
    caller: Caller,
    cost: number,
    answer: StoreDecision,
    started: number,
  ): RateLimitDecision {
    const { policy, rate } = entry;
    const logged = caller.key;
    let decision: RateLimitDecision;
    try {
      decision = decisionOf(policy, rate, answer, cost);
    } catch (err) {
      // An answer the decision cannot be read from is a failed store.
      return this.afterFailure(entry, caller, cost, err);
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
      return this.refused(decision, logged, cost);
    }
    // The insurance counted every request this process let through, those it decided itself while
    // the store failed or answered late included: a store that recovers (or was slow to connect)
    // never lets this process admit again what the insurance already admitted in the window.
    const shadow = this.callers.insure(caller, costRate(rate, cost));
    if (!shadow.allowed) {
      const refusal = decisionOf(policy, rate, shadow, cost);
      this.observer.decision("limited", {
        policy: policy.name,
        key: logged,
        remaining: 0,
        retryAfterMs: refusal.retryAfterMs,
      });
      return this.refused(refusal, logged, cost);
    }
    this.observer.allowed(policy.name, logged, decision.remaining);
    return decision;
  }

  /** The store failed or timed out: `onStoreError` decides, and a refusal is remembered like the store's. */
  private afterFailure(entry: Policy, caller: Caller, cost: number, err: unknown): RateLimitDecision {
    const decision = this.storeFailed(entry, caller, cost, err);
    return decision.allowed || !decision.counted ? decision : this.refused(decision, caller.key, cost);
  }

  private policyFor(limit: number): Policy {
    const known = this.policies.get(limit);
    if (known) return known;
    const entry = policyEntry(checkPolicy({ ...this.policy, limit }));
    // Per-caller limits are usually a few tiers; past that, compute each time rather than grow.
    if (this.policies.size < 100) this.policies.set(limit, entry);
    return entry;
  }

  /** Remembers a refusal until its Retry-After, and counts it toward a ban. */
  private refused(decision: RateLimitDecision, logged: string, cost: number): RateLimitDecision {
    if (this.options.blockCache) this.blocks.block(logged, decision.retryAfterMs, cost, decision.policy.limit);
    return this.countRefusal(decision, logged, cost);
  }

  /** A refusal of this process (from the store, the block cache or the in-flight bound) toward a ban. */
  private countRefusal(decision: RateLimitDecision, logged: string, cost: number): RateLimitDecision {
    const ban = this.options.ban;
    if (!ban || !this.refusals?.banned(logged)) return decision;
    this.blocks.block(logged, ban.forMs, cost, decision.policy.limit, true);
    this.observer.decision("ban_started", { policy: decision.policy.name, key: logged, forMs: ban.forMs });
    return { ...decision, retryAfterMs: ban.forMs, banned: true };
  }

  private refusedLocally(
    outcome: "in_flight_limited" | "block_cached" | "banned",
    { policy, rate }: Policy,
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
    return banned ? decision : this.countRefusal(decision, key, cost);
  }

  private storeFailed(entry: Policy, caller: Caller, cost: number, err: unknown): RateLimitDecision {
    const { policy, rate } = entry;
    const logged = caller.key;
    const reason = err instanceof TimeoutError ? "timeout" : "error";
    this.observer.count("storeErrors", { policy: policy.name, reason });
    // Name, message and code only: driver errors can carry connection strings and request details.
    const fields = { policy: policy.name, key: logged, reason, err: errorSummary(err) };
    if (this.options.onStoreError === "insurance") {
      const decision = decisionOf(policy, rate, this.callers.insure(caller, costRate(rate, cost)), cost);
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
        headers: { "retry-after": "1" },
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
