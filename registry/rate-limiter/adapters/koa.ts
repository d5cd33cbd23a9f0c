// Koa 3 adapter: `rateLimit()` middleware, answering 429 itself and adding the RateLimit headers.
import type { Context, Middleware } from "koa";
import type { RateLimiter } from "../limiter";
import { fieldValue } from "../http/headers";
import { limitRoute, type FrameworkDefaults, type RateLimitRouteOptions } from "../http/limit-route";
import { routeTemplateOf, userIdOf } from "./route-and-user-koa";

export type KoaRateLimitOptions = RateLimitRouteOptions<Context>;

const koaDefaults: FrameworkDefaults<Context> = {
  userIdOf,
  // The socket, not `ctx.ip`: `app.proxy = true` trusts the leftmost X-Forwarded-For, which the client writes.
  peerOf: (ctx) => ctx.req.socket.remoteAddress,
  // On a @koa/router route: its template, prefix included. Before the router (app.use()): one quota for the app.
  routeOf: (ctx) => {
    const routeTemplate = routeTemplateOf(ctx);
    return routeTemplate === undefined ? "* /" : `${ctx.method} ${routeTemplate}`;
  },
  headerOf: (ctx, name) => ctx.get(name) || undefined,
};

/**
 * Put it on the route, after the middleware that sets `ctx.state.user`.
 *
 * @example
 * const limiter = new RateLimiter(store, { name: "payments", limit: 10, windowMs: 60_000 });
 * router.post("/payments", authenticate, rateLimit(limiter), createPayment);
 */
export function rateLimit(limiter: RateLimiter, options: KoaRateLimitOptions = {}): Middleware {
  const limit = limitRoute(limiter, options, koaDefaults);
  return async function rateLimitMiddleware(ctx, next) {
    const outcome = await limit(ctx);
    // A limiter before this one on the route added its items already: ours go after them.
    const { headers } = outcome;
    for (const name in headers) ctx.set(name, fieldValue(name, headers[name] ?? "", ctx.response.get(name)));
    if (outcome.kind === "send") {
      ctx.status = outcome.status;
      ctx.type = "application/json";
      ctx.body = outcome.body;
      return;
    }
    await next();
  };
}
