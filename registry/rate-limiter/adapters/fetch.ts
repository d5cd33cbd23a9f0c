// Fetch-standard adapter (Next.js route handlers, Bun.serve, Deno.serve, Remix actions): wraps a `(Request) => Response` handler.
import type { RateLimiter } from "../limiter";
import { limitRoute, type FrameworkDefaults, type RateLimitRouteOptions } from "../http/limit-route";

/** There is no framework user or client address here: `getUserId` (or `getKey`) is required. */
export type FetchRateLimitOptions = RateLimitRouteOptions<Request> &
  ({ getUserId: NonNullable<RateLimitRouteOptions<Request>["getUserId"]> } | { getKey: NonNullable<RateLimitRouteOptions<Request>["getKey"]> });

const fetchDefaults: FrameworkDefaults<Request> = {
  userIdOf: () => undefined,
  ipOf: () => undefined,
  // No route table: the concrete path. Pass `getRoute` when paths carry ids (`/orders/123`).
  routeOf: (request) => `${request.method} ${new URL(request.url).pathname}`,
  headerOf: (request, name) => request.headers.get(name) ?? undefined,
};

/**
 * @example
 * export const POST = withRateLimit(limiter, { getUserId: async (req) => (await auth(req)).id }, async (req) => {
 *   return Response.json(await createPayment(await req.json()), { status: 201 });
 * });
 */
export function withRateLimit<Args extends unknown[]>(
  limiter: RateLimiter,
  options: FetchRateLimitOptions,
  handler: (request: Request, ...rest: Args) => Response | Promise<Response>,
): (request: Request, ...rest: Args) => Promise<Response> {
  const limit = limitRoute(limiter, options, fetchDefaults);
  return async function rateLimitedHandler(request, ...rest) {
    const outcome = await limit(request);
    if (outcome.kind === "send") {
      return new Response(outcome.body, { status: outcome.status, headers: { ...outcome.headers, "content-type": "application/json" } });
    }
    const response = await handler(request, ...rest);
    // A Response from fetch() has immutable headers: copy it when adding ours.
    const headed = new Response(response.body, response);
    for (const [name, value] of Object.entries(outcome.headers)) headed.headers.set(name, value);
    return headed;
  };
}
