// Express 5 adapter: `rateLimit()` middleware, answering 429 itself and adding the RateLimit headers.
import type { Request, RequestHandler } from "express";
import type { RateLimiter } from "../limiter";
import { fieldValue } from "../http/headers";
import { limitRoute, type FrameworkDefaults, type RateLimitRouteOptions } from "../http/limit-route";
import { mountTemplate, type RouterLayer } from "./mount-template-express";
import { routePathOf, userIdOf } from "./route-and-user-express";

export type ExpressRateLimitOptions = RateLimitRouteOptions<Request>;

/** A router mounted at "/accounts/:accountId" has a concrete `req.baseUrl`: key by the mount's template instead. */
function routeOf(req: Request): string {
  const base = mountTemplate((req.app as unknown as { router?: { stack?: RouterLayer[] } }).router?.stack, req.baseUrl);
  if (base === undefined) {
    throw new Error(
      `rate-limiter: cannot find the route template of the router mounted at "${req.baseUrl}"; pass getRoute (e.g. () => "POST /accounts/:id/payments").`,
    );
  }
  const path = routePathOf(req);
  return path === undefined ? `* ${base || "/"}` : `${req.method} ${base}${path}`;
}

const expressDefaults: FrameworkDefaults<Request> = {
  userIdOf,
  // The socket, not `req.ip`: the `trustProxy` option counts hops whatever `app.set("trust proxy")` says.
  peerOf: (req) => req.socket.remoteAddress,
  // On a route: its template, mounts included. With app.use(): one quota for everything below the mount.
  routeOf,
  headerOf: (req, name) => req.get(name),
};

/**
 * @example
 * const limiter = new RateLimiter(store, { name: "payments", limit: 10, windowMs: 60_000 });
 * app.post("/payments", authenticate, rateLimit(limiter), createPayment);
 * app.use(rateLimit(limiter, { trustProxy: 1 })); // behind one proxy (a load balancer) that appends X-Forwarded-For
 */
export function rateLimit(limiter: RateLimiter, options: ExpressRateLimitOptions = {}): RequestHandler {
  const limit = limitRoute(limiter, options, expressDefaults);
  // No async function: Express 5 would chain one more promise onto the one it returns.
  return function rateLimitMiddleware(req, res, next) {
    limit(req).then((outcome) => {
      try {
        // Node's own setHeader: our names and values are plain strings, Express's res.set only adds checks for others.
        // A limiter before this one on the route added its items already: ours go after them.
        const { headers } = outcome;
        for (const name in headers) res.setHeader(name, fieldValue(name, headers[name] ?? "", res.getHeader(name)));
        if (outcome.kind === "send") res.status(outcome.status).type("application/json").send(outcome.body);
        else next();
      } catch (err) {
        next(err);
      }
    }, next);
  };
}
