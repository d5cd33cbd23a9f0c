import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { IdempotencyHandler } from "../handler";
import { IDEMPOTENCY_METRICS } from "../metrics";
import { MemoryStore } from "../testing/memory-store";
import { outcome } from "../testing/deferred";
import type { CachedRecord, IdempotencyCache } from "../types";
import { createPrometheusMetrics } from "./prometheus-metrics";

class GatewayTimeout extends Error {}

/** A cache the test can empty, to send a replay to the store instead. */
function mapCache(): IdempotencyCache & { clear(): void } {
  const entries = new Map<string, CachedRecord>();
  const id = (scope: { operation: string; userId: string; key: string }) =>
    JSON.stringify([scope.operation, scope.userId, scope.key]);
  return {
    get: (scope) => Promise.resolve(entries.get(id(scope))),
    set: (scope, record) => Promise.resolve(void entries.set(id(scope), record)),
    clear: () => entries.clear(),
  };
}

/** Every sample of a scrape as `name{label="value",...}` (labels sorted) -> value. */
function samples(scrape: string): Record<string, number> {
  const result: Record<string, number> = {};
  for (const line of scrape.split("\n")) {
    const match = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const [, name, labels = "", value] = match;
    const sorted = [...labels.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([pair]) => pair).sort();
    result[sorted.length ? `${name}{${sorted.join(",")}}` : String(name)] = Number(value);
  }
  return result;
}

const only = (all: Record<string, number>, pattern: RegExp) =>
  Object.fromEntries(Object.entries(all).filter(([name]) => pattern.test(name)));

describe("createPrometheusMetrics", () => {
  it("registers every metric of IDEMPOTENCY_METRICS with its type, help and labels", async () => {
    const registry = new Registry();
    createPrometheusMetrics(registry);
    const registered = await registry.getMetricsAsJSON();
    expect(
      registered.map(({ name, type, help }) => ({ name, type, help })).sort((a, b) => a.name.localeCompare(b.name)),
    ).toEqual(
      Object.values(IDEMPOTENCY_METRICS)
        .map(({ name, type, help }) => ({ name, type, help }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    );
  });

  it("scrapes the exact counts after first request, replay, conflict, cache hit, transient failure and poisoning", async () => {
    const registry = new Registry();
    const cache = mapCache();
    const handler = new IdempotencyHandler(new MemoryStore(), cache, {
      maxRetries: 2,
      metrics: createPrometheusMetrics(registry),
    });
    const payment = (key: string, amount = 100) => ({
      operation: "payments:create",
      userId: "u_1",
      key,
      payload: { amount, currency: "EUR" },
    });
    const charge = () => ({ id: "ch_1" });
    const timeOut = () => {
      throw new GatewayTimeout("provider timed out");
    };

    await handler.execute(payment("k-first"), charge); // cache miss, runs
    cache.clear();
    expect(await handler.execute(payment("k-first"), charge)).toMatchObject({ replayed: true }); // cache miss, replayed from the store
    expect(await outcome(handler.execute(payment("k-first", 999), charge))).toMatchObject({
      code: "KEY_REUSED_WITH_DIFFERENT_REQUEST",
    }); // cache hit
    expect(await handler.execute(payment("k-first"), charge)).toMatchObject({ replayed: true }); // cache hit
    expect(await outcome(handler.execute(payment("k-flaky"), timeOut))).toMatchObject({
      error: expect.any(GatewayTimeout) as unknown,
    }); // released
    expect(await outcome(handler.execute(payment("k-flaky"), timeOut))).toMatchObject({
      error: expect.any(GatewayTimeout) as unknown,
    }); // poisoned
    expect(await outcome(handler.execute(payment("k-flaky"), charge))).toMatchObject({ code: "REQUEST_FAILED" });

    const scraped = samples(await registry.metrics());
    const op = 'operation="payments:create"';
    expect(only(scraped, /_total/)).toEqual({
      [`idempotency_executions_total{${op},outcome="success"}`]: 1,
      [`idempotency_executions_total{${op},outcome="transient_failure"}`]: 1,
      [`idempotency_executions_total{${op},outcome="poisoned"}`]: 1,
      [`idempotency_duplicates_total{${op},status="SUCCESS"}`]: 2,
      [`idempotency_duplicates_total{${op},status="FAILED"}`]: 1,
      [`idempotency_conflicts_total{${op}}`]: 1,
      [`idempotency_cache_hits_total{${op}}`]: 2,
      [`idempotency_cache_misses_total{${op}}`]: 5,
      [`idempotency_retries_total{${op}}`]: 1,
      [`idempotency_poisoned_total{${op}}`]: 1,
      idempotency_cleaned_total: 0,
    });
    expect(only(scraped, /_count/)).toEqual({
      [`idempotency_execution_duration_seconds_count{${op},outcome="success"}`]: 1,
      [`idempotency_execution_duration_seconds_count{${op},outcome="transient_failure"}`]: 1,
      [`idempotency_execution_duration_seconds_count{${op},outcome="poisoned"}`]: 1,
    });
    expect(scraped[`idempotency_execution_duration_seconds_bucket{le="30",${op},outcome="success"}`]).toBe(1);
  });

  it("adds a cleanup's whole count, not one per run", async () => {
    let now = Date.UTC(2030, 0, 1);
    const registry = new Registry();
    const handler = new IdempotencyHandler(new MemoryStore({ now: () => now }), undefined, {
      ttlMs: 1_000,
      metrics: createPrometheusMetrics(registry),
    });
    for (const key of ["a", "b", "c"])
      await handler.execute({ operation: "op", userId: "u", key, payload: {} }, () => "ok");
    now += 2_000;

    expect(await handler.cleanupExpiredRecords()).toEqual({ deleted: 3 });
    expect(samples(await registry.metrics()).idempotency_cleaned_total).toBe(3);
  });

  it("prefixes names, and reuses the metrics when a second handler reports to the same registry", async () => {
    const registry = new Registry();
    const first = createPrometheusMetrics(registry, { prefix: "billing_" });
    const second = createPrometheusMetrics(registry, { prefix: "billing_" });
    first.increment("conflicts", { operation: "a" });
    second.increment("conflicts", { operation: "a" }, 2);
    second.observe("duration", 0.2, { operation: "a", outcome: "success" });

    const scraped = samples(await registry.metrics());
    expect(scraped['billing_idempotency_conflicts_total{operation="a"}']).toBe(3);
    expect(scraped['billing_idempotency_execution_duration_seconds_sum{operation="a",outcome="success"}']).toBe(0.2);
    expect(Object.keys(scraped).some((name) => name.startsWith("idempotency_"))).toBe(false);
  });
});
