// Serves the registry to Prometheus: `app.get("/metrics", metricsRoute)`.
import type { Context } from "hono";
import { metricsRegistry } from "./metrics-prometheus";

export async function metricsRoute(c: Context) {
  return c.body(await metricsRegistry.metrics(), 200, { "content-type": metricsRegistry.contentType });
}
