import { Registry } from "prom-client";
import { expect, it } from "vitest";
import { RateLimiter } from "../limiter";
import { MemoryRateLimitStore } from "../stores/memory-store";
import { createPrometheusMetrics } from "./prometheus-metrics";

it("exposes decisions and store latency in the Prometheus text format", async () => {
  const registry = new Registry();
  const limiter = new RateLimiter(new MemoryRateLimitStore(), {
    name: "payments",
    limit: 1,
    windowMs: 60_000,
    metrics: createPrometheusMetrics(registry),
  });
  await limiter.check("u_1");
  await limiter.check("u_1");
  const text = await registry.metrics();
  expect(text).toContain('rate_limit_decisions_total{policy="payments",outcome="allowed"} 1');
  expect(text).toContain('rate_limit_decisions_total{policy="payments",outcome="limited"} 1');
  expect(text).toContain('rate_limit_store_duration_seconds_count{policy="payments"} 2');
});

it("reuses the metrics when a second limiter registers on the same registry", () => {
  const registry = new Registry();
  createPrometheusMetrics(registry);
  expect(() => createPrometheusMetrics(registry)).not.toThrow();
});
