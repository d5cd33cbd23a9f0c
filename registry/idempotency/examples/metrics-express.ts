// Example: the handler reports to a prom-client registry that Express serves at GET /metrics.
import express from "express";
import { collectDefaultMetrics, Registry } from "prom-client";
import { IdempotencyHandler, MemoryStore } from "@/blocks/idempotency";
import { createPrometheusMetrics } from "@/blocks/idempotency/utils/prometheus-metrics";

/**
 * Your app's registry: the idempotency metrics plus Node's process metrics.
 *
 * @example
 * await registry.metrics(); // "# HELP idempotency_duplicates_total ..."
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

/**
 * Reports every decision to `registry`. Use `new PostgresStore(pool)` in production.
 *
 * @example
 * await handler.execute({ operation: "payments:create", userId, key, payload }, () => charge(payload));
 */
export const handler = new IdempotencyHandler(new MemoryStore(), undefined, { metrics: createPrometheusMetrics(registry) });

/**
 * An Express app whose GET /metrics Prometheus scrapes.
 *
 * @example
 * app.listen(3000); // curl localhost:3000/metrics
 */
export const app = express();
app.get("/metrics", async (_req, res) => {
  res.type(registry.contentType).send(await registry.metrics());
});
