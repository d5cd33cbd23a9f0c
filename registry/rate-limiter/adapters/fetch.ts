// Fetch-standard adapter (Next.js route handlers, Bun.serve, Deno.serve, Remix actions): wraps a `(Request) => Response` handler.
import type { RateLimiter } from "../limiter";
import { addField } from "../http/headers";
import { limitRoute, type FrameworkDefaults, type RateLimitRouteOptions } from "../http/limit-route";

type Required<K extends keyof RateLimitRouteOptions<Request>> = {
  [P in K]-?: NonNullable<RateLimitRouteOptions<Request>[P]>;
};

/**
 * There is no framework user, client address or route table here: pass `getUserId` and `getRoute`
 * (the template, e.g. `() => "POST /api/payments/[id]"`: the concrete path would give every id its
 * own quota), or `getKey`.
 */
export type FetchRateLimitOptions = RateLimitRouteOptions<Request> &
  (Required<"getUserId" | "getRoute"> | Required<"getKey">);

const fetchDefaults: FrameworkDefaults<Request> = {
  userIdOf: () => undefined,
  peerOf: () => undefined,
  routeOf: () => "",
  headerOf: (request, name) => request.headers.get(name) ?? undefined,
};

/**
 * @example
 * export const POST = withRateLimit(limiter, { getUserId: async (req) => (await auth(req)).id, getRoute: () => "POST /api/payments" }, async (req) => {
 *   return Response.json(await createPayment(await req.json()), { status: 201 });
 * });
 */
export function withRateLimit<Args extends unknown[]>(
  limiter: RateLimiter,
  options: FetchRateLimitOptions,
  handler: (request: Request, ...rest: Args) => Response | Promise<Response>,
): (request: Request, ...rest: Args) => Promise<Response> {
  if (!options.getKey && !(options.getUserId && options.getRoute)) {
    throw new Error(
      'rate-limiter: withRateLimit needs getUserId and getRoute (the route\'s template, e.g. () => "POST /api/payments/[id]"), or getKey.',
    );
  }
  const limit = limitRoute(limiter, options, fetchDefaults);
  return async function rateLimitedHandler(request, ...rest) {
    const outcome = await limit(request);
    if (outcome.kind === "send") {
      return new Response(outcome.body, {
        status: outcome.status,
        headers: { ...outcome.headers, "content-type": "application/json" },
      });
    }
    const response = await handler(request, ...rest);
    // A Response from fetch() has immutable headers: copy it when adding ours.
    const headed = new Response(response.body, response);
    // A withRateLimit inside this one added its items already: ours join them.
    for (const [name, value] of Object.entries(outcome.headers)) addField(headed.headers, name, value);
    return headed;
  };
}
