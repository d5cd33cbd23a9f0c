// The handler's metrics sink on prom-client: registers every metric of IDEMPOTENCY_METRICS on your registry.
import type { Registry } from "prom-client";
import { IDEMPOTENCY_METRICS, type IdempotencyMetrics } from "../metrics";
import { prometheusSink } from "./prometheus-sink";

/**
 * @example
 * createPrometheusMetrics(registry, { prefix: "billing_", buckets: [0.1, 0.5, 1, 5, 30] });
 */
export type PrometheusMetricsOptions = {
  /** Prepended to every metric name, e.g. "billing_" gives `billing_idempotency_duplicates_total`. @default "" */
  prefix?: string;
  /**
   * Buckets of `idempotency_execution_duration_seconds`. Protected operations call payment
   * providers and the like, so the default reaches 30 s rather than prom-client's 10 s.
   * @default [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
   */
  buckets?: number[];
};

const DEFAULT_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Registers the idempotency counters and the duration histogram on `registry` and returns the sink
 * to pass as the handler's `metrics`. Calling it again with the same registry reuses the metrics,
 * so several handlers can report to one registry.
 *
 * @example
 * import { Registry } from "prom-client";
 * const registry = new Registry();
 * const handler = new IdempotencyHandler(store, cache, { metrics: createPrometheusMetrics(registry) });
 * app.get("/metrics", async (_req, res) => res.type(registry.contentType).send(await registry.metrics()));
 */
export function createPrometheusMetrics(
  registry: Registry,
  options: PrometheusMetricsOptions = {},
): IdempotencyMetrics {
  const sink = prometheusSink(registry, IDEMPOTENCY_METRICS, {
    prefix: options.prefix,
    buckets: options.buckets ?? DEFAULT_BUCKETS,
  });
  return { increment: sink.increment, observe: sink.observe };
}
