// Fastify 5 adapter: `rateLimit()` returns an onRequest hook, for one route or the whole app.
import type { FastifyReply, FastifyRequest } from "fastify";
import type { RateLimiter } from "../limiter";
import { fieldValue } from "../http/headers";
import { limitRoute, type FrameworkDefaults, type RateLimitRouteOptions } from "../http/limit-route";
import { routeTemplateOf, userIdOf } from "./route-and-user-fastify";

export type FastifyRateLimitOptions = RateLimitRouteOptions<FastifyRequest>;

const fastifyDefaults: FrameworkDefaults<FastifyRequest> = {
  userIdOf,
  // The socket, not `request.ip`: the limiter's `trustProxy` counts hops whatever Fastify's says.
  peerOf: (request) => request.socket.remoteAddress,
  // Fastify matches the route before the first hook runs, so the template (prefixes included) is known even app-wide.
  routeOf: (request) => `${request.method} ${routeTemplateOf(request) ?? "*"}`,
  headerOf: (request, name) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value[0] : value;
  },
};

/**
 * Runs before the body is parsed, so a refused request costs no parsing. Put it after the hook
 * that sets `request.user`.
 *
 * @example
 * app.post("/payments", { onRequest: [authenticate, rateLimit(limiter)] }, createPayment);
 * app.addHook("onRequest", rateLimit(limiter)); // every route, one quota per route and user
 */
export function rateLimit(limiter: RateLimiter, options: FastifyRateLimitOptions = {}) {
  const limit = limitRoute(limiter, options, fastifyDefaults);
  // Callback style, Fastify's hook idiom without a promise of its own: done() lets the request on;
  // an answer sent here ends it.
  return function rateLimitHook(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void {
    limit(request).then((outcome) => {
      try {
        // A limiter before this one on the route added its items already: ours go after them.
        const { headers } = outcome;
        for (const name in headers) reply.header(name, fieldValue(name, headers[name] ?? "", reply.getHeader(name)));
        if (outcome.kind === "send") reply.code(outcome.status).type("application/json").send(outcome.body);
        else done();
      } catch (err) {
        done(err as Error);
      }
    }, done);
  };
}
