// The relay's metrics sink on prom-client: registers every metric of OUTBOX_METRICS on your registry.
import type { Registry } from "prom-client";
import { OUTBOX_METRICS, type OutboxMetrics } from "../metrics";
import { prometheusSink } from "./prometheus-sink";

export type PrometheusMetricsOptions = {
  /** Prepended to every metric name, e.g. "api_" gives `api_outbox_published_total`. @default "" */
  prefix?: string | undefined;
};

/**
 * Registers the outbox metrics on `registry` and returns the sink to pass as the relay's `metrics`.
 * Calling it again with the same registry reuses them.
 *
 * @example
 * const relay = startOutboxRelay({ db: pool, publish, metrics: createPrometheusMetrics(registry) });
 */
export function createPrometheusMetrics(registry: Registry, options: PrometheusMetricsOptions = {}): OutboxMetrics {
  const sink = prometheusSink(registry, OUTBOX_METRICS, { prefix: options.prefix });
  return { increment: sink.increment, set: sink.set };
}
