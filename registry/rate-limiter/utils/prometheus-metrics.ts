// The limiter's metrics sink on prom-client: registers every metric of RATE_LIMIT_METRICS on your registry.
import type { Registry } from "prom-client";
import { RATE_LIMIT_METRICS, type RateLimitMetrics } from "../metrics";
import { prometheusSink } from "./prometheus-sink";

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
  const sink = prometheusSink(registry, RATE_LIMIT_METRICS, {
    prefix: options.prefix,
    buckets: options.buckets ?? DEFAULT_BUCKETS,
  });
  return { increment: sink.increment, observe: sink.observe };
}
