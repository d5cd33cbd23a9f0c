// The per-request record of what idempotency decided, attached by every adapter to the request.

/**
 * - `pending`: nothing decided yet (stays so only when the route's own callbacks threw first)
 * - `skipped`: no Idempotency-Key and `requireKey` is off: the route ran unprotected
 * - `executing`: this request holds the key and the route is running
 * - `executed`: the route ran and succeeded; its response is recorded for replay (the handler logs a failed write)
 * - `replayed`: the stored response was sent; the route did not run
 * - `rejected`: an idempotency error answered (bad key, conflict, in progress, failed, store down)
 * - `failed`: the route ran and failed (an error, or an error status); nothing was stored
 * - `uncaptured`: the route ran but streamed its response, so nothing was stored and the key was freed
 */
export type IdempotencyOutcome =
  "pending" | "skipped" | "executing" | "executed" | "replayed" | "rejected" | "failed" | "uncaptured";

/**
 * Available as `res.locals.idempotency` (Express), `request.idempotency` (Fastify) and
 * `c.get("idempotency")` (Hono) on every protected request, whatever the outcome. A field is
 * `undefined` until it is known: `key` on a request without one, `requestHash` before the body is read.
 *
 * @example
 * app.addHook("onResponse", async (request) => request.log.info({ idempotency: request.idempotency }, "idempotency decision"));
 */
export type IdempotencyContext = {
  key: string | undefined;
  userId: string | undefined;
  operation: string | undefined;
  requestHash: string | undefined;
  outcome: IdempotencyOutcome;
};
