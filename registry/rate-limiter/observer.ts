// Turns each limiter decision into one log line and its metric, from one table.
import { errorSummary } from "./error-summary";
import type { BlockLogger as RateLimitLogger } from "./logger";
import {
  noopMetrics,
  type MetricLabels,
  type RateLimitCounter,
  type RateLimitHistogram,
  type RateLimitMetrics,
} from "./metrics";

type Level = "debug" | "info" | "warn" | "error";

export type Outcome =
  | "allowed"
  | "limited"
  | "in_flight_limited"
  | "block_cached"
  | "ban_started"
  | "banned"
  | "insurance_allowed"
  | "insurance_limited"
  | "failed_open"
  | "failed_closed";

/**
 * How each outcome is logged. An allowed request is routine (debug); a refusal is worth a line;
 * a store failure is a warning when requests still flow, an error when they are refused.
 */
export const DECISION_LOGS: Record<Outcome, { level: Level; msg: string }> = {
  allowed: { level: "debug", msg: "rate-limit: allowed" },
  limited: { level: "info", msg: "rate-limit: limited" },
  in_flight_limited: { level: "info", msg: "rate-limit: limited, the key's quota is already waiting on the store" },
  block_cached: { level: "info", msg: "rate-limit: limited, refused before and not yet due (no store call)" },
  ban_started: { level: "warn", msg: "rate-limit: caller banned, too many refusals" },
  banned: { level: "info", msg: "rate-limit: refused, the caller is banned (no store call)" },
  insurance_allowed: { level: "warn", msg: "rate-limit: store failed, allowed by the local insurance limiter" },
  insurance_limited: { level: "info", msg: "rate-limit: store failed, limited by the local insurance limiter" },
  failed_open: { level: "warn", msg: "rate-limit: store failed, request let through uncounted" },
  failed_closed: { level: "error", msg: "rate-limit: store failed, request refused" },
};

export class Observer {
  private readonly logger: RateLimitLogger;
  private readonly metrics: RateLimitMetrics;
  /** A metrics sink is set: only then is the store call timed (two clock reads) and an allowed decision counted. */
  readonly metered: boolean;

  constructor(logger: RateLimitLogger, metrics: RateLimitMetrics) {
    this.logger = logger;
    this.metrics = metrics;
    this.metered = metrics !== noopMetrics;
  }

  /** Logs one decision and counts it under `rate_limit_decisions_total{policy, outcome}`. */
  decision(outcome: Outcome, fields: { policy: string } & Record<string, unknown>): void {
    const { level, msg } = DECISION_LOGS[outcome];
    if (this.writes(level)) this.log(level, msg, { ...fields, outcome });
    this.count("decisions", this.decisionLabels(fields.policy, outcome));
  }

  /**
   * `decision("allowed", ...)` for the path every allowed request takes: its line is built only for
   * a logger that writes debug, its count only for a metrics sink.
   */
  allowed(policy: string, key: string, remaining: number): void {
    const { level, msg } = DECISION_LOGS.allowed;
    if (this.writes(level)) this.log(level, msg, { policy, key, remaining, outcome: "allowed" });
    if (this.metered) this.count("decisions", this.decisionLabels(policy, "allowed"));
  }

  /** A logger without the method, or (pino) one whose level is above it, gets no line built. */
  private writes(level: Level): boolean {
    return this.logger[level] !== undefined && this.logger.isLevelEnabled?.(level) !== false;
  }

  /** The labels of each (policy, outcome), made once: the sinks only read them. */
  private readonly labels = new Map<string, Partial<Record<Outcome, MetricLabels>>>();

  private decisionLabels(policy: string, outcome: Outcome): MetricLabels {
    let byOutcome = this.labels.get(policy);
    if (!byOutcome) {
      byOutcome = {};
      // Policies are few (one per limiter and its per-caller tiers): a bound keeps a misuse from growing it.
      if (this.labels.size < 1_000) this.labels.set(policy, byOutcome);
    }
    byOutcome[outcome] ??= { policy, outcome };
    return byOutcome[outcome];
  }

  count(id: RateLimitCounter, labels: MetricLabels): void {
    try {
      this.metrics.increment(id, labels);
    } catch (err) {
      this.log("warn", "rate-limit: metrics sink threw", { err: errorSummary(err) });
    }
  }

  observe(id: RateLimitHistogram, seconds: number, labels: MetricLabels): void {
    try {
      this.metrics.observe(id, seconds, labels);
    } catch (err) {
      this.log("warn", "rate-limit: metrics sink threw", { err: errorSummary(err) });
    }
  }

  private log(level: Level, msg: string, fields: Record<string, unknown>): void {
    const write = this.logger[level];
    if (!write) return;
    try {
      write.call(this.logger, fields, msg);
    } catch {
      // A broken logger must never change the outcome of a request.
    }
  }
}
