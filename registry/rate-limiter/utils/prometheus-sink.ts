// Registers a block's table of metrics on a prom-client registry and reports to them: one source, vendored by the idempotency, rate-limiter and outbox blocks.
import { Counter, Gauge, Histogram } from "prom-client";
import type { Registry } from "prom-client";

/** One row of a block's metrics table (`IDEMPOTENCY_METRICS`, `RATE_LIMIT_METRICS`, `OUTBOX_METRICS`). */
export type MetricDefinition = {
  type: "counter" | "gauge" | "histogram";
  name: string;
  help: string;
  labels: readonly string[];
};

/** What every metric id of a table reports through (unbound functions: a block's sink hands on the ones of its metric types). */
export type PrometheusSink = {
  increment: (id: string, labels: Record<string, string>, value?: number) => void;
  observe: (id: string, value: number, labels: Record<string, string>) => void;
  set: (id: string, value: number) => void;
};

/**
 * Registers every metric of `definitions` on `registry` (named `prefix` + its name) and returns the
 * sink that moves them by id. A metric the registry already holds under that name is reused, so
 * several handlers, limiters or relays can report to one registry.
 *
 * @example
 * const sink = prometheusSink(registry, IDEMPOTENCY_METRICS, { prefix: "billing_", buckets: [0.1, 1, 10] });
 * sink.increment("retries", { operation: "charge" });
 */
export function prometheusSink(
  registry: Registry,
  definitions: Readonly<Record<string, MetricDefinition>>,
  options: { prefix?: string | undefined; buckets?: number[] | undefined },
): PrometheusSink {
  const prefix = options.prefix ?? "";
  const counters = new Map<string, Counter>();
  const histograms = new Map<string, Histogram>();
  const gauges = new Map<string, Gauge>();

  for (const [id, definition] of Object.entries(definitions)) {
    const name = `${prefix}${definition.name}`;
    const existing = registry.getSingleMetric(name);
    const config = { name, help: definition.help, labelNames: definition.labels, registers: [registry] };
    if (definition.type === "counter") counters.set(id, (existing as Counter | undefined) ?? new Counter(config));
    else if (definition.type === "gauge") gauges.set(id, (existing as Gauge | undefined) ?? new Gauge(config));
    else
      histograms.set(
        id,
        (existing as Histogram | undefined) ??
          new Histogram({ ...config, ...(options.buckets ? { buckets: options.buckets } : {}) }),
      );
  }

  return {
    increment: (id, labels, value = 1) => {
      counters.get(id)?.inc(labels, value);
    },
    observe: (id, value, labels) => {
      histograms.get(id)?.observe(labels, value);
    },
    set: (id, value) => {
      gauges.get(id)?.set(value);
    },
  };
}
