// Example: the handler reports to a prom-client registry that Hono serves at GET /metrics.
import { Hono } from "hono";
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
 * A Hono app whose GET /metrics Prometheus scrapes.
 *
 * @example
 * serve({ fetch: app.fetch, port: 3000 }); // @hono/node-server; curl localhost:3000/metrics
 */
export const app = new Hono();
app.get("/metrics", async (c) => c.body(await registry.metrics(), 200, { "content-type": registry.contentType }));
