// Express: the route a request matched and the user who sent it, read one way by every block that vendors this file (named -express so `add` copies it with the Express adapter only).
import type { Request } from "express";

/**
 * The id of the user your auth middleware (Passport) set on `req.user`.
 *
 * @example
 * userIdOf(req); // "u_1"
 */
export function userIdOf(req: Request): unknown {
  return (req as { user?: { id?: unknown } }).user?.id;
}

/**
 * The matched route's own path template, below the router it is mounted on; `undefined` where no
 * route has matched yet (middleware mounted with `app.use`). Express shows the mount only as the
 * concrete `req.baseUrl`, so each block decides what a mounted route is keyed by.
 *
 * @example
 * // app.use("/accounts/:id", router); router.post("/withdrawals", ...); POST /accounts/A/withdrawals
 * routePathOf(req); // "/withdrawals" (req.baseUrl is "/accounts/A")
 */
export function routePathOf(req: Request): string | undefined {
  return (req.route as { path: string } | undefined)?.path;
}
