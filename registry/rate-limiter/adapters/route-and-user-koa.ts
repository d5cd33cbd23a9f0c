// Koa: the route a request matched and the user who sent it, read one way by every block that vendors this file (named -koa so `add` copies it with the Koa adapter only).
import type { Context } from "koa";

/**
 * The id of the user your auth middleware set on `ctx.state.user`.
 *
 * @example
 * userIdOf(ctx); // "u_1"
 */
export function userIdOf(ctx: Context): unknown {
  return (ctx.state as { user?: { id?: unknown } }).user?.id;
}

/**
 * @koa/router's template of the matched route, prefix included, never the concrete path;
 * `undefined` before a router route matched (middleware mounted with `app.use()`).
 *
 * @example
 * // new Router({ prefix: "/orders" }).post("/:id/refunds", ...); POST /orders/o_1/refunds
 * routeTemplateOf(ctx); // "/orders/:id/refunds"
 */
export function routeTemplateOf(ctx: Context): string | undefined {
  const template = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
  return template === undefined ? undefined : String(template);
}
