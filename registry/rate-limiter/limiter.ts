// RateLimiter: one policy over one store, bounded in time and in calls per key, with an insurance limiter for store failures.
import { createHash } from "node:crypto";
import { RateLimitError } from "./errors";
import { decisionOf, rateOf } from "./gcra";
import { rateLimitHeaders, retryAfterSeconds } from "./http/headers";
import { checkOptions, type OnStoreError, type RateLimiterOptions } from "./limiter-options";
import { silentLogger } from "./logger";
import { noopMetrics } from "./metrics";
import { Observer } from "./observer";
import { MemoryRateLimitStore } from "./stores/memory-store";
import type { GcraRate, RateLimitDecision, RateLimitPolicy, RateLimitStore } from "./types";
import { TimeoutError, withTimeout } from "./utils/with-timeout";

export type { OnStoreError, RateLimiterOptions } from "./limiter-options";

/**
 * @example
 * const limiter = new RateLimiter(new RedisRateLimitStore(redis), { name: "payments", limit: 10, windowMs: 60_000, logger });
 * const decision = await limiter.check(`user:${userId}`);
 * if (!decision.allowed) return res.status(429).set(rateLimitHeaders(decision)).end();
 */
export class RateLimiter {
  readonly policy: RateLimitPolicy;
  private readonly store: RateLimitStore;
  private readonly rate: GcraRate;
  private readonly timeoutMs: number;
  private readonly onStoreError: OnStoreError;
  private readonly maxInFlight: number;
  /** Store calls still waiting, by stored key; an entry leaves when its count is back to 0. */
  private readonly inFlight = new Map<string, number>();
  /** The same policy in this process's memory: shadows every allowed decision, decides when the store cannot. */
  private readonly insurance = new MemoryRateLimitStore();
  private readonly observer: Observer;
  private readonly labels: { policy: string };

  constructor(store: RateLimitStore, options: RateLimiterOptions) {
    const checked = checkOptions(options);
    this.store = store;
    this.policy = checked.policy;
    this.rate = rateOf(this.policy);
    this.timeoutMs = checked.timeoutMs;
    this.onStoreError = checked.onStoreError;
    this.maxInFlight = checked.maxInFlight;
    this.observer = new Observer(options.logger ?? silentLogger, options.metrics ?? noopMetrics);
    this.labels = { policy: this.policy.name };
  }

  /**
   * Takes one request from `key`'s quota if there is one left. Resolves with the decision, allowed
   * or not; rejects only when the store failed and `onStoreError` is `"deny"`.
   */
  async check(key: string): Promise<RateLimitDecision> {
    // The policy name (no ":" in it) namespaces the key: two policies on one store never share a bucket.
    const logged = boundedKey(key);
    const stored = `${this.policy.name}:${logged}`;
    const pending = this.inFlight.get(stored) ?? 0;
    if (pending >= this.maxInFlight) return this.tooManyInFlight(logged);
    this.inFlight.set(stored, pending + 1);
    const started = performance.now();
    const call = this.store.take(stored, this.rate);
    // The slot is free when the store answers, not when we stop waiting: a store that is slow for
    // one key never holds more than `maxInFlight` of its calls.
    const release = () => this.release(stored);
    call.then(release, release);
    let decision: RateLimitDecision;
    try {
      decision = decisionOf(this.policy, this.rate, await withTimeout(call, this.timeoutMs, "rate-limit store"));
    } catch (err) {
      return this.storeFailed(stored, logged, err);
    }
    this.observer.observe("storeDuration", (performance.now() - started) / 1000, this.labels);
    const fields = { policy: this.policy.name, key: logged, remaining: decision.remaining };
    if (decision.allowed) {
      void this.insurance.take(stored, this.rate);
      this.observer.decision("allowed", fields);
    } else {
      this.observer.decision("limited", { ...fields, retryAfterMs: decision.retryAfterMs });
    }
    return decision;
  }

  /**
   * `check`, rejecting with `RATE_LIMITED` when refused: for code outside HTTP (jobs, queues), or
   * routes that let the app's error handler answer.
   */
  async consume(key: string): Promise<RateLimitDecision> {
    const decision = await this.check(key);
    if (decision.allowed) return decision;
    throw rateLimitedError(decision);
  }

  private release(key: string): void {
    const pending = (this.inFlight.get(key) ?? 1) - 1;
    if (pending > 0) this.inFlight.set(key, pending);
    else this.inFlight.delete(key);
  }

  /** `maxInFlight` decisions are pending for this key: together they can take its whole quota. */
  private tooManyInFlight(key: string): RateLimitDecision {
    const intervalMs = Math.ceil(this.rate.intervalUs / 1000);
    this.observer.decision("in_flight_limited", { policy: this.policy.name, key, inFlight: this.maxInFlight });
    return { allowed: false, policy: this.policy, remaining: 0, resetMs: this.policy.windowMs, retryAfterMs: intervalMs, counted: true };
  }

  private async storeFailed(key: string, logged: string, err: unknown): Promise<RateLimitDecision> {
    const reason = err instanceof TimeoutError ? "timeout" : "error";
    this.observer.count("storeErrors", { policy: this.policy.name, reason });
    // Name, message and code only: driver errors can carry connection strings and request details.
    const fields = { policy: this.policy.name, key: logged, reason, err: describe(err) };
    if (this.onStoreError === "insurance") {
      const decision = decisionOf(this.policy, this.rate, await this.insurance.take(key, this.rate));
      this.observer.decision(decision.allowed ? "insurance_allowed" : "insurance_limited", { ...fields, remaining: decision.remaining });
      return decision;
    }
    if (this.onStoreError === "deny") {
      this.observer.decision("failed_closed", fields);
      throw new RateLimitError("RATE_LIMITER_UNAVAILABLE", "Rate limiting is unavailable: retry later.", {
        cause: err,
        retryAfterSeconds: 1,
        headers: { "Retry-After": "1" },
      });
    }
    this.observer.decision("failed_open", fields);
    return { allowed: true, policy: this.policy, remaining: this.policy.limit, resetMs: 0, retryAfterMs: 0, counted: false };
  }
}

/**
 * The RATE_LIMITED error for a refusal, with its `Retry-After` and RateLimit headers.
 *
 * @example
 * if (!decision.allowed) throw rateLimitedError(decision);
 */
export function rateLimitedError(decision: RateLimitDecision): RateLimitError {
  return new RateLimitError("RATE_LIMITED", "Too many requests: retry later.", {
    retryAfterSeconds: retryAfterSeconds(decision),
    headers: rateLimitHeaders(decision),
  });
}

const MAX_KEY_LENGTH = 200;

/**
 * Keys come from clients (an `Idempotency-Key` header can be kilobytes): a long one is replaced by
 * its SHA-256, so no store holds unbounded keys and PostgreSQL's index never refuses one (which
 * would fail open: a way around the limit).
 */
function boundedKey(key: string): string {
  if (key.length <= MAX_KEY_LENGTH) return key;
  return `sha256:${createHash("sha256").update(key).digest("hex")}`;
}

function describe(err: unknown): { name: string; message: string; code?: unknown } {
  if (err instanceof Error) return { name: err.name, message: err.message, code: (err as { code?: unknown }).code };
  return { name: "NonError", message: String(err) };
}
