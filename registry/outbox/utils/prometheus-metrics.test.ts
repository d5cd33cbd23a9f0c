import { PGlite } from "@electric-sql/pglite";
import { Registry } from "prom-client";
import { expect, it } from "vitest";
import { addToOutbox } from "../add-to-outbox";
import { schemaStatements } from "../postgres-schema";
import { startOutboxRelay } from "../relay";
import { createPrometheusMetrics } from "./prometheus-metrics";

it("exposes published, failed and dead by topic, and the backlog gauges, in the Prometheus text format", async () => {
  const db = new PGlite();
  for (const sql of schemaStatements()) await db.query(sql);
  await addToOutbox(db, { topic: "order.created", payload: 1 });
  await addToOutbox(db, { topic: "refund.created", payload: 2 });
  const registry = new Registry();
  let dead = false;
  const relay = startOutboxRelay({
    db,
    pollMs: 5,
    maxAttempts: 1,
    metricsIntervalMs: 5,
    metrics: createPrometheusMetrics(registry),
    publish: (message) =>
      message.topic === "refund.created" ? Promise.reject(new Error("no route")) : Promise.resolve(),
    onDead: () => void (dead = true),
  });
  while (!dead) await new Promise((resolve) => setTimeout(resolve, 5));
  await new Promise((resolve) => setTimeout(resolve, 50));
  await relay.stop();
  await db.close();
  const text = await registry.metrics();
  expect(text).toContain('outbox_published_total{topic="order.created"} 1');
  expect(text).toContain('outbox_publish_failures_total{topic="refund.created"} 1');
  expect(text).toContain('outbox_dead_total{topic="refund.created"} 1');
  expect(text).toContain("outbox_backlog 0");
  expect(text).toContain("outbox_oldest_unpublished_age_seconds 0");
});

it("reuses the metrics when a second relay registers on the same registry", () => {
  const registry = new Registry();
  createPrometheusMetrics(registry);
  expect(() => createPrometheusMetrics(registry)).not.toThrow();
});
