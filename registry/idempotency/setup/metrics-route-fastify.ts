// Serves the registry to Prometheus: `app.get("/metrics", metricsRoute)`.
import type { FastifyReply, FastifyRequest } from "fastify";
import { metricsRegistry } from "./metrics-prometheus";

export async function metricsRoute(_request: FastifyRequest, reply: FastifyReply) {
  return reply.type(metricsRegistry.contentType).send(await metricsRegistry.metrics());
}
