// Serves the registry to Prometheus: `app.get("/metrics", metricsRoute)`.
import type { RequestHandler } from "express";
import { metricsRegistry } from "./metrics-prometheus";

export const metricsRoute: RequestHandler = async (_req, res) => {
  res.type(metricsRegistry.contentType).send(await metricsRegistry.metrics());
};
