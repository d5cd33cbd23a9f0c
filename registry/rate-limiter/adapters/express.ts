// Express 5 adapter: `rateLimit()` middleware, answering 429 itself and adding the RateLimit headers.
import type { Request, RequestHandler } from "express";
import type { RateLimiter } from "../limiter";
import { limitRoute, type FrameworkDefaults, type RateLimitRouteOptions } from "../http/limit-route";

export type ExpressRateLimitOptions = RateLimitRouteOptions<Request>;

const expressDefaults: FrameworkDefaults<Request> = {
  userIdOf: (req) => (req as { user?: { id?: unknown } }).user?.id,
  // Set `app.set("trust proxy", ...)` behind a proxy, or every client shares the proxy's address.
  ipOf: (req) => req.ip,
  // Mounted on a route: its template. Mounted with app.use(): one quota for everything below the mount.
  routeOf: (req) => (req.route ? `${req.method} ${req.baseUrl}${String(req.route.path)}` : `* ${req.baseUrl || "/"}`),
  headerOf: (req, name) => req.get(name),
};

/**
 * @example
 * const limiter = new RateLimiter(store, { name: "payments", limit: 10, windowMs: 60_000 });
 * app.post("/payments", authenticate, rateLimit(limiter), createPayment);
 */
export function rateLimit(limiter: RateLimiter, options: ExpressRateLimitOptions = {}): RequestHandler {
  const limit = limitRoute(limiter, options, expressDefaults);
  return async function rateLimitMiddleware(req, res, next) {
    const outcome = await limit(req);
    res.set(outcome.headers);
    if (outcome.kind === "send") {
      res.status(outcome.status).type("application/json").send(outcome.body);
      return;
    }
    next();
  };
}
