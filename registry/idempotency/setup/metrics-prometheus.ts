// The app's Prometheus registry: the idempotency counters plus Node's process metrics.
import { collectDefaultMetrics, Registry } from "prom-client";
import type { IdempotencyMetrics } from "../metrics";
import { createPrometheusMetrics } from "../utils/prometheus-metrics";

export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });
export const metrics: IdempotencyMetrics = createPrometheusMetrics(metricsRegistry);
