// Express 5 adapter: `idempotent()` wraps a route that returns its result; `idempotency()` captures an ordinary route.
import type { Request, RequestHandler, Response } from "express";
import type { IdempotencyHandler } from "../handler";
import { captureNodeResponse, type NodeResponseCapture } from "../http/capture-node-response";
import type { IdempotencyContext } from "../http/context";
import { toHttpResponse, type HttpResponse, type RouteResult } from "../http/http-response";
import { IDEMPOTENCY_KEY_HEADER } from "../http/key-header";
import { protectRoute, type ProtectedRequest } from "../http/protect";
import { clientGoneSignal } from "../http/client-gone";
import type {
  FrameworkDefaults,
  IdempotencyRouteOptions,
  RouteContext,
  WrapperRouteOptions,
  WrapperRun,
} from "../http/route-options";
import { IdempotencySetupError } from "../http/user-id";
import { warnOnce } from "../http/warn-once";
import { routePathOf, userIdOf } from "./route-and-user-express";

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express types its locals through this global namespace.
  namespace Express {
    interface Locals {
      /** Set on every request a protected route sees. */
      idempotency?: IdempotencyContext;
    }
  }
}

export type ExpressRouteOptions = IdempotencyRouteOptions<Request>;

/** `run(req, ctx)` is the route's logic; side effects belong in it. `ctx.signal` aborts if another execution takes the key over; `ctx.tx` is the transaction with `transaction: true`. */
export type ExpressIdempotentOptions<Tx = unknown> = WrapperRouteOptions<Request> & WrapperRun<[req: Request], Tx>;

const expressDefaults: FrameworkDefaults<Request> = {
  userIdOf,
  operationOf,
  bodyOf: (req): unknown => req.body,
};

/**
 * `"<METHOD> <route path template>"`. Express shows a route's own template (`req.route.path`) but
 * a router's mount path only as concrete text (`req.baseUrl` is "/accounts/A", not
 * "/accounts/:id"), so a mount stays out of the name as `<router>`: an operation holding ids would
 * give every URL its own metric labels and scope. It stays `<router>` even though the rate limiter
 * finds mount templates: the operation scopes every stored key, so renaming it would let a retry
 * that spans the deploy run again.
 */
function operationOf(req: Request): string {
  const path = routePathOf(req);
  if (path === undefined) {
    throw new IdempotencySetupError(
      "idempotency: the Express adapter ran outside a route (mounted with app.use), where the route's path template is unknown. Put it on the route (`app.post(path, idempotency(...), handler)`) or pass `getOperation`.",
    );
  }
  if (req.baseUrl === "") return `${req.method} ${path}`;
  warnOnce(
    `idempotency: the route ${path} is mounted on a router whose path Express does not expose as a template; its operation is "${req.method} <router>${path}". Pass \`getOperation\` to name it.`,
  );
  return `${req.method} <router>${path}`;
}

/**
 * Wrapper style: a route handler that runs `run` once per key and replays its result to retries.
 * Mount a body parser first: the fingerprint covers `req.body`, and without one every body looks the same.
 *
 * @example
 * app.post("/payments", express.json(), idempotent(handler, {
 *   getUserId: (req) => req.user.id,
 *   requireKey: true,
 *   run: async (req) => ({ status: 201, body: await charge(req.body) }),
 * }));
 */
export function idempotent<Tx = unknown>(
  handler: IdempotencyHandler<Tx>,
  options: ExpressIdempotentOptions<Tx>,
): RequestHandler {
  const { run, ...routeOptions } = options as WrapperRouteOptions<Request> & {
    run: (req: Request, ctx: RouteContext) => RouteResult | Promise<RouteResult>;
  };
  const protect = protectRoute(handler, routeOptions, expressDefaults);
  return async function idempotentRoute(req, res, next) {
    const verdict = await protect(
      req,
      requestOf(req, res, async (ctx) => toHttpResponse(await run(req, ctx))),
    );
    if (verdict.kind === "error") next(verdict.error);
    else if (verdict.kind !== "uncaptured") send(res, verdict.response);
  };
}

/**
 * Capture style: middleware placed before an ordinary route. It records what the route sends
 * (`res.json`, `res.send`, `write()`s) and replays it; error responses are never recorded. Mount
 * it on the route (not `app.use`) so the default operation names the route's path template, and
 * after a body parser, since the fingerprint covers `req.body`.
 *
 * @example
 * app.post("/payments", express.json(), idempotency(handler, { getUserId: (req) => req.user.id }), async (req, res) => {
 *   res.status(201).json(await charge(req.body));
 * });
 */
export function idempotency(handler: IdempotencyHandler<unknown>, options: ExpressRouteOptions = {}): RequestHandler {
  const protect = protectRoute(handler, options, expressDefaults, "Express's idempotency() middleware");
  return async function idempotencyMiddleware(req, res, next) {
    let capture: NodeResponseCapture | undefined;
    const verdict = await protect(
      req,
      requestOf(req, res, () => {
        capture = captureNodeResponse(res);
        next();
        return capture.response;
      }),
    );
    // The route's own answer is held back in the capture; a stream already went out.
    if (verdict.kind === "error") next(verdict.error);
    else if (verdict.kind === "answered") capture?.release();
    else if (verdict.kind !== "uncaptured") send(res, verdict.response);
  };
}

/** Built as one literal (no spread into a second object): this runs on every request. */
function requestOf(req: Request, res: Response, produce: ProtectedRequest["produce"]): ProtectedRequest {
  return {
    produce,
    method: req.method,
    url: req.originalUrl,
    keyHeader: req.headers[IDEMPOTENCY_KEY_HEADER],
    hasCredentials: req.headers.authorization !== undefined,
    setContext: (context) => (res.locals.idempotency = context),
    signal: () => clientGoneSignal(res),
  };
}

/** Writes the bytes as they are: `res.send` would add a charset or an ETag the first response may not have had. */
function send(res: Response, response: HttpResponse): void {
  res.status(response.status);
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
  // The text, when the response has it, goes out with the headers in one write; bytes alone go in a second.
  res.end(response.text ?? response.body);
}
