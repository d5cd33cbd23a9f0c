import { afterAll, expect, it } from "vitest";
import { app, handler } from "./metrics-fastify";

afterAll(() => app.close());

it("serves the idempotency counters at GET /metrics in the Prometheus text format", async () => {
  const payment = { operation: "payments:create", userId: "u_1", key: "k-1", payload: { amount: 100 } };
  await handler.execute(payment, () => ({ id: "ch_1" }));
  await handler.execute(payment, () => ({ id: "ch_1" }));

  const res = await app.inject({ method: "GET", url: "/metrics" });
  expect(res.statusCode).toBe(200);
  expect(res.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
  expect(res.body).toContain('idempotency_executions_total{operation="payments:create",outcome="success"} 1');
  expect(res.body).toContain('idempotency_duplicates_total{operation="payments:create",status="SUCCESS"} 1');
  expect(res.body).toContain("process_cpu_seconds_total");
});
