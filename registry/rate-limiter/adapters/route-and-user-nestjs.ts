// NestJS: the route a request matched and the user who sent it, on either platform, read one way by every block that vendors this file (named -nestjs so `add` copies it with the NestJS adapter only).

/** What these readers take from the request of either platform (Express or Fastify). */
export type NestRouteRequest = {
  /** Set by the app's guard (Passport sets `request.user`). */
  user?: unknown;
  /** Express: the matched route, below `baseUrl`. */
  route?: { path?: string };
  baseUrl?: string;
  /** Fastify: the matched route's options. */
  routeOptions?: { url?: string };
};

/**
 * The id of the user your guard set on `request.user`.
 *
 * @example
 * userIdOf(request); // "u_1"
 */
export function userIdOf(request: NestRouteRequest): unknown {
  return (request.user as { id?: unknown } | undefined)?.id;
}

/**
 * The route's template, global prefix included: Fastify's `routeOptions.url`, or Express's mount
 * path and route path (Nest mounts no routers, so `baseUrl` holds no concrete segment);
 * `undefined` where neither platform shows one.
 *
 * @example
 * // app.setGlobalPrefix("api"); @Controller("orders") with @Post(":id/refunds"); POST /api/orders/o_1/refunds
 * routeTemplateOf(request); // "/api/orders/:id/refunds"
 */
export function routeTemplateOf(request: NestRouteRequest): string | undefined {
  const express =
    request.route?.path === undefined ? undefined : `${request.baseUrl ?? ""}${String(request.route.path)}`;
  return request.routeOptions?.url ?? express;
}
