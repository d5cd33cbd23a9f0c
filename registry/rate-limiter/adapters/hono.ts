// Hono 4 adapter: `rateLimit()` middleware, answering 429 itself and adding the RateLimit headers.
import type { Context, MiddlewareHandler } from "hono";
import type { RateLimiter } from "../limiter";
import { addField } from "../http/headers";
import { limitRoute, type FrameworkDefaults, type RateLimitRouteOptions } from "../http/limit-route";
import { routeTemplateOf, userIdOf } from "./route-and-user-hono";

export type HonoRateLimitOptions = RateLimitRouteOptions<Context>;

const honoDefaults: FrameworkDefaults<Context> = {
  userIdOf,
  // Hono has no runtime-independent client address: @hono/node-server hands over the Node request
  // (`c.env.incoming`); on other runtimes pass `getUserId` for anonymous routes.
  peerOf: (c) =>
    (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket?.remoteAddress,
  routeOf: (c) => `${c.req.method} ${routeTemplateOf(c)}`,
  headerOf: (c, name) => c.req.header(name),
};

/**
 * @example
 * app.post("/payments", rateLimit(limiter, { getUserId: (c) => c.get("user").id }), createPayment);
 */
export function rateLimit(limiter: RateLimiter, options: HonoRateLimitOptions = {}): MiddlewareHandler {
  const limit = limitRoute(limiter, options, honoDefaults);
  return async function rateLimitMiddleware(c, next) {
    const outcome = await limit(c);
    if (outcome.kind === "send") {
      return c.body(outcome.body, outcome.status as 429, { ...outcome.headers, "content-type": "application/json" });
    }
    await next();
    // After the route (and onError): a Response the route built itself would drop headers set before.
    addHeaders(c, outcome.headers);
  };
}

function addHeaders(c: Context, headers: Record<string, string>): void {
  try {
    // A limiter after this one on the route (whose middleware ends first) added its items already: ours join them.
    for (const [name, value] of Object.entries(headers)) addField(c.res.headers, name, value);
  } catch {
    // A Response from fetch() has immutable headers: answer with a copy that has ours.
    c.res = new Response(c.res.body, c.res);
    for (const [name, value] of Object.entries(headers)) addField(c.res.headers, name, value);
  }
}
