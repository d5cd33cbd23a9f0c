import type { AddressInfo } from "node:net";
import { expect, it } from "vitest";
import { app, handler } from "./metrics-express";

it("serves the idempotency counters at GET /metrics in the Prometheus text format", async () => {
  const payment = { operation: "payments:create", userId: "u_1", key: "k-1", payload: { amount: 100 } };
  await handler.execute(payment, () => ({ id: "ch_1" }));
  await handler.execute(payment, () => ({ id: "ch_1" }));

  const server = app.listen(0);
  await new Promise((resolve) => server.once("listening", resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const body = await res.text();
    expect(body).toContain('idempotency_executions_total{operation="payments:create",outcome="success"} 1');
    expect(body).toContain('idempotency_duplicates_total{operation="payments:create",status="SUCCESS"} 1');
    expect(body).toContain("process_cpu_seconds_total");
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
