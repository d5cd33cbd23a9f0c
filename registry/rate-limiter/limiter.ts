// RateLimiter: one policy over one store, with a time limit on the store and fail-open or fail-closed behaviour.
import { createHash } from "node:crypto";
import { RateLimitError } from "./errors";
import { checkPolicy, decisionOf, rateOf } from "./gcra";
import { rateLimitHeaders, retryAfterSeconds } from "./http/headers";
import { silentLogger, type RateLimitLogger } from "./logger";
import { noopMetrics, type RateLimitMetrics } from "./metrics";
import { Observer } from "./observer";
import type { GcraRate, RateLimitDecision, RateLimitPolicy, RateLimitStore } from "./types";
import { TimeoutError, withTimeout } from "./utils/with-timeout";

export type RateLimiterOptions = {
  /** Requests allowed per window for one key; also the largest burst. */
  limit: number;
  windowMs: number;
  /** Names the policy in headers, metrics and logs, and namespaces its keys in the store. @default "default" */
  name?: string | undefined;
  /** How long a decision may wait for the store before it counts as failed. @default 200 */
  timeoutMs?: number | undefined;
  /**
   * What a store failure means for the request: `false` lets it through uncounted (logged at warn,
   * counted in `rate_limit_decisions_total{outcome="failed_open"}`); `true` refuses it with 503
   * `RATE_LIMITER_UNAVAILABLE`. @default false
   */
  failClosed?: boolean | undefined;
  logger?: RateLimitLogger | undefined;
  metrics?: RateLimitMetrics | undefined;
};

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
  private readonly failClosed: boolean;
  private readonly observer: Observer;
  private readonly labels: { policy: string };

  constructor(store: RateLimitStore, options: RateLimiterOptions) {
    this.store = store;
    this.policy = checkPolicy({ name: options.name ?? "default", limit: options.limit, windowMs: options.windowMs });
    this.rate = rateOf(this.policy);
    this.timeoutMs = options.timeoutMs ?? 200;
    this.failClosed = options.failClosed ?? false;
    this.observer = new Observer(options.logger ?? silentLogger, options.metrics ?? noopMetrics);
    this.labels = { policy: this.policy.name };
  }

  /**
   * Takes one request from `key`'s quota if there is one left. Resolves with the decision, allowed
   * or not; rejects only when the store failed and the limiter fails closed.
   */
  async check(key: string): Promise<RateLimitDecision> {
    const started = performance.now();
    const stored = boundedKey(key);
    let decision: RateLimitDecision;
    try {
      // The policy name (no ":" in it) namespaces the key: two policies on one store never share a bucket.
      const answer = await withTimeout(this.store.take(`${this.policy.name}:${stored}`, this.rate), this.timeoutMs, "rate-limit store");
      decision = decisionOf(this.policy, this.rate, answer);
    } catch (err) {
      return this.storeFailed(stored, err);
    }
    this.observer.observe("storeDuration", (performance.now() - started) / 1000, this.labels);
    const fields = { policy: this.policy.name, key: stored, remaining: decision.remaining };
    if (decision.allowed) this.observer.decision("allowed", fields);
    else this.observer.decision("limited", { ...fields, retryAfterMs: decision.retryAfterMs });
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

  private storeFailed(key: string, err: unknown): RateLimitDecision {
    const reason = err instanceof TimeoutError ? "timeout" : "error";
    this.observer.count("storeErrors", { policy: this.policy.name, reason });
    // Name, message and code only: driver errors can carry connection strings and request details.
    const error = describe(err);
    if (this.failClosed) {
      this.observer.decision("failed_closed", { policy: this.policy.name, key, reason, err: error });
      throw new RateLimitError("RATE_LIMITER_UNAVAILABLE", "Rate limiting is unavailable: retry later.", {
        cause: err,
        retryAfterSeconds: 1,
        headers: { "Retry-After": "1" },
      });
    }
    this.observer.decision("failed_open", { policy: this.policy.name, key, reason, err: error });
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
