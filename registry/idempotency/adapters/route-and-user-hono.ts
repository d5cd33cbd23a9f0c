// Hono: the route a request matched and the user who sent it, read one way by every block that vendors this file (named -hono so `add` copies it with the Hono adapter only).
import type { Context } from "hono";
import { routePath } from "hono/route";

/**
 * The id of the user your auth middleware set with `c.set("user", ...)`.
 *
 * @example
 * userIdOf(c); // "u_1"
 */
export function userIdOf(c: Context): unknown {
  return (c.get("user" as never) as { id?: unknown } | undefined)?.id;
}

/**
 * The template of the handler's own route, base paths included, never the concrete path: the last
 * matched route is the handler's, also when this runs in `app.use()` middleware.
 *
 * @example
 * // app.route("/v1", sub) with sub.post("/payments/:id", ...); POST /v1/payments/p_1
 * routeTemplateOf(c); // "/v1/payments/:id"
 */
export function routeTemplateOf(c: Context): string {
  return routePath(c, -1);
}
