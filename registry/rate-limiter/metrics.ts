// The metrics sink the limiter reports to, and the one table of metric names, helps and labels.

export type MetricLabels = Record<string, string>;

/** One definition per metric, so every sink (prom-client, StatsD, tests) registers the same set. */
export const RATE_LIMIT_METRICS = {
  decisions: {
    type: "counter",
    name: "rate_limit_decisions_total",
    help: "Rate-limit decisions, by policy and outcome (allowed, limited, in_flight_limited, block_cached, ban_started, banned, insurance_allowed, insurance_limited, failed_open, failed_closed).",
    labels: ["policy", "outcome"],
  },
  storeErrors: {
    type: "counter",
    name: "rate_limit_store_errors_total",
    help: "Store calls that failed or timed out.",
    labels: ["policy", "reason"],
  },
  storeDuration: {
    type: "histogram",
    name: "rate_limit_store_duration_seconds",
    help: "Time the store took to answer one decision.",
    labels: ["policy"],
  },
} as const;

type Definitions = typeof RATE_LIMIT_METRICS;
export type RateLimitCounter = {
  [K in keyof Definitions]: Definitions[K]["type"] extends "counter" ? K : never;
}[keyof Definitions];
export type RateLimitHistogram = {
  [K in keyof Definitions]: Definitions[K]["type"] extends "histogram" ? K : never;
}[keyof Definitions];

/**
 * Where the limiter reports. Metric ids are keys of `RATE_LIMIT_METRICS`.
 *
 * @example
 * const metrics: RateLimitMetrics = {
 *   increment: (id, labels, value = 1) => statsd.increment(RATE_LIMIT_METRICS[id].name, value, labels),
 *   observe: (id, seconds, labels) => statsd.timing(RATE_LIMIT_METRICS[id].name, seconds * 1000, labels),
 * };
 */
export interface RateLimitMetrics {
  /** Adds `value` (default 1) to a counter. */
  increment(id: RateLimitCounter, labels: MetricLabels, value?: number): void;
  observe(id: RateLimitHistogram, seconds: number, labels: MetricLabels): void;
}

export const noopMetrics: RateLimitMetrics = {
  increment() {},
  observe() {},
};
