// The metrics sink the handler reports to, and the one table of metric names, helps and labels.

export type MetricLabels = Record<string, string>;

/** One definition per metric, so every sink (prom-client, StatsD, tests) registers the same set. */
export const IDEMPOTENCY_METRICS = {
  executions: {
    type: "counter",
    name: "idempotency_executions_total",
    help: "Executions of protected operations, by how they ended.",
    labels: ["operation", "outcome"],
  },
  duplicates: {
    type: "counter",
    name: "idempotency_duplicates_total",
    help: "Requests that found an existing record, by that record's status.",
    labels: ["operation", "status"],
  },
  waits: {
    type: "counter",
    name: "idempotency_waits_total",
    help: "Duplicates that waited for the first attempt (waitMs), by how the wait ended.",
    labels: ["operation", "outcome"],
  },
  conflicts: {
    type: "counter",
    name: "idempotency_conflicts_total",
    help: "Keys reused with a different request payload.",
    labels: ["operation"],
  },
  cacheHits: {
    type: "counter",
    name: "idempotency_cache_hits_total",
    help: "Completed records answered from the cache.",
    labels: ["operation"],
  },
  cacheMisses: {
    type: "counter",
    name: "idempotency_cache_misses_total",
    help: "Cache look-ups that found nothing.",
    labels: ["operation"],
  },
  cacheErrors: {
    type: "counter",
    name: "idempotency_cache_errors_total",
    help: "Cache calls that failed or timed out (swallowed).",
    labels: ["method"],
  },
  storeErrors: {
    type: "counter",
    name: "idempotency_store_errors_total",
    help: "Store calls that failed or timed out.",
    labels: ["method"],
  },
  retries: {
    type: "counter",
    name: "idempotency_retries_total",
    help: "Transient failures whose key was released for another try.",
    labels: ["operation"],
  },
  poisoned: {
    type: "counter",
    name: "idempotency_poisoned_total",
    help: "Keys marked FAILED after exhausting their retry budget.",
    labels: ["operation"],
  },
  recovered: {
    type: "counter",
    name: "idempotency_recovered_total",
    help: "Stuck PROCESSING records taken back by the recovery job.",
    labels: ["operation"],
  },
  cleaned: {
    type: "counter",
    name: "idempotency_cleaned_total",
    help: "Expired records deleted by the cleanup job.",
    labels: [],
  },
  leaseLost: {
    type: "counter",
    name: "idempotency_lease_lost_total",
    help: "Executions that found their record taken by recovery or another owner.",
    labels: ["operation"],
  },
  unrecorded: {
    type: "counter",
    name: "idempotency_unrecorded_results_total",
    help: "Successful executions whose result could not be written to the store.",
    labels: ["operation"],
  },
  duration: {
    type: "histogram",
    name: "idempotency_execution_duration_seconds",
    help: "Time spent in protected operations.",
    labels: ["operation", "outcome"],
  },
} as const;

type Definitions = typeof IDEMPOTENCY_METRICS;
export type IdempotencyCounter = {
  [K in keyof Definitions]: Definitions[K]["type"] extends "counter" ? K : never;
}[keyof Definitions];
export type IdempotencyHistogram = {
  [K in keyof Definitions]: Definitions[K]["type"] extends "histogram" ? K : never;
}[keyof Definitions];

/**
 * Where the handler reports. Metric ids are keys of `IDEMPOTENCY_METRICS`.
 *
 * @example
 * const metrics: IdempotencyMetrics = {
 *   increment: (id, labels, value = 1) => statsd.increment(IDEMPOTENCY_METRICS[id].name, value, labels),
 *   observe: (id, seconds, labels) => statsd.timing(IDEMPOTENCY_METRICS[id].name, seconds * 1000, labels),
 * };
 */
export interface IdempotencyMetrics {
  /** Adds `value` (default 1) to a counter. */
  increment(id: IdempotencyCounter, labels: MetricLabels, value?: number): void;
  observe(id: IdempotencyHistogram, seconds: number, labels: MetricLabels): void;
}

export const noopMetrics: IdempotencyMetrics = {
  increment() {},
  observe() {},
};
