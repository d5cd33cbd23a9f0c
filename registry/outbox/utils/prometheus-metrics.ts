// The relay's metrics sink on prom-client: registers every metric of OUTBOX_METRICS on your registry.
import { Counter, Gauge } from "prom-client";
import type { Registry } from "prom-client";
import { OUTBOX_METRICS, type OutboxMetrics } from "../metrics";

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
  const prefix = options.prefix ?? "";
  const counters = new Map<string, Counter>();
  const gauges = new Map<string, Gauge>();

  for (const [id, definition] of Object.entries(OUTBOX_METRICS)) {
    const name = `${prefix}${definition.name}`;
    const existing = registry.getSingleMetric(name);
    const config = { name, help: definition.help, labelNames: definition.labels, registers: [registry] };
    if (definition.type === "counter") counters.set(id, (existing as Counter | undefined) ?? new Counter(config));
    else gauges.set(id, (existing as Gauge | undefined) ?? new Gauge(config));
  }

  return {
    increment(id, labels, value = 1) {
      counters.get(id)?.inc(labels, value);
    },
    set(id, value) {
      gauges.get(id)?.set(value);
    },
  };
}
