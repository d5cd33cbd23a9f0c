// Fastify: the route a request matched and the user who sent it, read one way by every block that vendors this file (named -fastify so `add` copies it with the Fastify adapter only).
import type { FastifyRequest } from "fastify";

/**
 * The id of the user your auth hook set on `request.user`.
 *
 * @example
 * userIdOf(request); // "u_1"
 */
export function userIdOf(request: FastifyRequest): unknown {
  return (request as { user?: { id?: unknown } }).user?.id;
}

/**
 * The matched route's template, prefixes included, never the concrete path; `undefined` for a
 * request no route matched. Fastify matches before the first hook runs, so app-wide hooks see it too.
 *
 * @example
 * // app.register(plugin, { prefix: "/v1" }) declaring "/payments/:id"; POST /v1/payments/p_1
 * routeTemplateOf(request); // "/v1/payments/:id"
 */
export function routeTemplateOf(request: FastifyRequest): string | undefined {
  return request.routeOptions.url;
}
