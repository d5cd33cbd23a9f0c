// The limiter's metrics sink on prom-client: registers every metric of RATE_LIMIT_METRICS on your registry.
import { Counter, Histogram } from "prom-client";
import type { Registry } from "prom-client";
import { RATE_LIMIT_METRICS, type RateLimitMetrics } from "../metrics";

export type PrometheusMetricsOptions = {
  /** Prepended to every metric name, e.g. "api_" gives `api_rate_limit_decisions_total`. @default "" */
  prefix?: string | undefined;
  /**
   * Buckets of `rate_limit_store_duration_seconds`: one Redis or PostgreSQL round trip, so they
   * start well below prom-client's defaults. @default [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25]
   */
  buckets?: number[] | undefined;
};

const DEFAULT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25];

/**
 * Registers the rate-limit metrics on `registry` and returns the sink to pass as the limiter's
 * `metrics`. Calling it again with the same registry reuses them, so several limiters share one.
 *
 * @example
 * const limiter = new RateLimiter(store, { limit: 10, windowMs: 60_000, metrics: createPrometheusMetrics(registry) });
 */
export function createPrometheusMetrics(registry: Registry, options: PrometheusMetricsOptions = {}): RateLimitMetrics {
  const prefix = options.prefix ?? "";
  const counters = new Map<string, Counter>();
  const histograms = new Map<string, Histogram>();

  for (const [id, definition] of Object.entries(RATE_LIMIT_METRICS)) {
    const name = `${prefix}${definition.name}`;
    const existing = registry.getSingleMetric(name);
    const config = { name, help: definition.help, labelNames: definition.labels, registers: [registry] };
    if (definition.type === "counter") {
      counters.set(id, (existing as Counter | undefined) ?? new Counter(config));
    } else {
      histograms.set(id, (existing as Histogram | undefined) ?? new Histogram({ ...config, buckets: options.buckets ?? DEFAULT_BUCKETS }));
    }
  }

  return {
    increment(id, labels, value = 1) {
      counters.get(id)?.inc(labels, value);
    },
    observe(id, seconds, labels) {
      histograms.get(id)?.observe(labels, seconds);
    },
  };
}
