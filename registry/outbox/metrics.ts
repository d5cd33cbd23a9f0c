// The metrics sink the relay reports to, and the one table of metric names, helps and labels.

export type MetricLabels = Record<string, string>;

/** One definition per metric, so every sink (prom-client, StatsD, tests) registers the same set. */
export const OUTBOX_METRICS = {
  published: {
    type: "counter",
    name: "outbox_published_total",
    help: "Messages published and marked published, by topic.",
    labels: ["topic"],
  },
  failed: {
    type: "counter",
    name: "outbox_publish_failures_total",
    help: "Publish attempts that failed (the row backs off and is retried, or goes dead), by topic.",
    labels: ["topic"],
  },
  dead: {
    type: "counter",
    name: "outbox_dead_total",
    help: "Messages that ran out of attempts and will not be published without a replay, by topic.",
    labels: ["topic"],
  },
  backlog: {
    type: "gauge",
    name: "outbox_backlog",
    help: "Messages not yet published (due, delayed, backing off or in flight), dead ones excluded.",
    labels: [],
  },
  oldestAge: {
    type: "gauge",
    name: "outbox_oldest_unpublished_age_seconds",
    help: "Age of the oldest message not yet published (0 when none): how far the relay lags behind.",
    labels: [],
  },
} as const;

type Definitions = typeof OUTBOX_METRICS;
export type OutboxCounter = {
  [K in keyof Definitions]: Definitions[K]["type"] extends "counter" ? K : never;
}[keyof Definitions];
export type OutboxGauge = {
  [K in keyof Definitions]: Definitions[K]["type"] extends "gauge" ? K : never;
}[keyof Definitions];

/**
 * Where the relay reports. Metric ids are keys of `OUTBOX_METRICS`.
 *
 * @example
 * const metrics: OutboxMetrics = {
 *   increment: (id, labels, value = 1) => statsd.increment(OUTBOX_METRICS[id].name, value, labels),
 *   set: (id, value) => statsd.gauge(OUTBOX_METRICS[id].name, value),
 * };
 */
export interface OutboxMetrics {
  /** Adds `value` (default 1) to a counter. */
  increment(id: OutboxCounter, labels: MetricLabels, value?: number): void;
  set(id: OutboxGauge, value: number): void;
}

export const noopMetrics: OutboxMetrics = {
  increment() {},
  set() {},
};
