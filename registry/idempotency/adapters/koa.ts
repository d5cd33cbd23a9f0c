// Koa 3 adapter: `idempotent()` wraps a route that returns its result; `idempotency()` captures an ordinary route.
import { Stream } from "node:stream";
import type { Context, Middleware } from "koa";
import type { IdempotencyHandler } from "../handler";
import { classifyResponseStatus } from "../http/classify-response";
import type { IdempotencyContext } from "../http/context";
import {
  normalizeHeaders,
  toHttpResponse,
  wireBody,
  type HttpResponse,
  type RouteResult,
  type Uncaptured,
} from "../http/http-response";
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
import { routeTemplateOf, userIdOf } from "./route-and-user-koa";

declare module "koa" {
  interface DefaultState {
    /** Set on every request a protected route sees. */
    idempotency?: IdempotencyContext;
  }
}

/** Both styles see the errors the route throws (`ctx.throw(422)`), so both take `isPermanentError`. */
export type KoaRouteOptions = IdempotencyRouteOptions<Context>;

/**
 * `run(ctx, op)` is the route's logic; side effects belong in it. `op` is the idempotency context
 * (Koa's own is `ctx`): `op.signal` aborts if another execution takes the key over; `op.tx` is the
 * transaction with `transaction: true`.
 */
export type KoaIdempotentOptions<Tx = unknown> = KoaRouteOptions & WrapperRun<[ctx: Context], Tx>;

/**
 * What identifies a request, read in one place: the method and @koa/router's route template scope
 * the key; the concrete path and query are what the request targets (for the fingerprint).
 */
const koaDefaults: FrameworkDefaults<Context> = {
  userIdOf,
  operationOf: (ctx) => {
    const routeTemplate = routeTemplateOf(ctx);
    const method = ctx.method;
    if (routeTemplate === undefined) {
      throw new IdempotencySetupError(
        `idempotency: a ${method} request reached a protected route with no @koa/router route template: mount it on a router route (router.post(path, ...)) or pass \`getOperation\`.`,
      );
    }
    return `${method} ${routeTemplate}`;
  },
  bodyOf: (ctx) => (ctx.request as { body?: unknown }).body,
};

/**
 * Wrapper style: route middleware that runs `run` at most once per key and replays its result.
 * Mount a body parser first (`@koa/bodyparser`): the fingerprint covers `ctx.request.body`.
 *
 * @example
 * router.post("/payments", idempotent(handler, {
 *   getUserId: (ctx) => ctx.state.user.id,
 *   requireKey: true,
 *   run: async (ctx) => ({ status: 201, body: await charge(ctx.request.body) }),
 * }));
 */
export function idempotent<Tx = unknown>(
  handler: IdempotencyHandler<Tx>,
  options: KoaIdempotentOptions<Tx>,
): Middleware {
  const { run, ...routeOptions } = options as WrapperRouteOptions<Context> & {
    run: (ctx: Context, op: RouteContext) => RouteResult | Promise<RouteResult>;
  };
  const protect = protectRoute(handler, withKoaErrors(routeOptions), koaDefaults);
  return async function idempotentRoute(ctx) {
    const verdict = await protect(
      ctx,
      requestOf(ctx, async (op) => toHttpResponse(await run(ctx, op))),
    );
    if (verdict.kind === "error") throw verdict.error;
    // A wrapper's route returns its result, so it never streams.
    if (verdict.kind !== "uncaptured") send(ctx, verdict.response);
  };
}

/**
 * Capture style: middleware before an ordinary route. It records what the route leaves in
 * `ctx.status`, `ctx.body` and its headers, and replays it; error statuses are never recorded, and
 * a stream body goes out unrecorded. Koa sends the response only after this returns, so the record
 * is written before the client can retry.
 *
 * @example
 * router.post("/payments", idempotency(handler, { getUserId: (ctx) => ctx.state.user.id }), async (ctx) => {
 *   ctx.status = 201;
 *   ctx.body = await charge(ctx.request.body);
 * });
 */
export function idempotency(handler: IdempotencyHandler<unknown>, options: KoaRouteOptions = {}): Middleware {
  const protect = protectRoute(handler, withKoaErrors(options), koaDefaults, "Koa's idempotency() middleware");
  return async function idempotencyMiddleware(ctx, next) {
    const verdict = await protect(
      ctx,
      requestOf(ctx, async () => {
        await next();
        return captureResponse(ctx);
      }),
    );
    // The route's own answer is on `ctx` already (answered, or a stream body that goes out as it is).
    if (verdict.kind === "error") throw verdict.error;
    if (verdict.kind === "replayed" || verdict.kind === "refused") send(ctx, verdict.response);
  };
}

/**
 * Koa errors carry their status (`ctx.throw(404)`, http-errors): unless the route says otherwise,
 * one that will not pass on retry (a 4xx but 408 and 429) fails the key, as the same response would.
 */
function withKoaErrors<Options extends KoaRouteOptions>(options: Options): Options {
  const classify = options.classifyResponse ?? classifyResponseStatus;
  const isPermanentError =
    options.isPermanentError ??
    ((err: unknown) => {
      const status = (err as { status?: unknown } | null)?.status;
      return typeof status === "number" && classify(status) === "permanent";
    });
  return { ...options, isPermanentError };
}

/** Built as one literal (no spread into a second object): this runs on every request. */
function requestOf(ctx: Context, produce: ProtectedRequest["produce"]): ProtectedRequest {
  return {
    produce,
    method: ctx.method,
    url: ctx.originalUrl,
    keyHeader: ctx.headers[IDEMPOTENCY_KEY_HEADER],
    hasCredentials: ctx.headers.authorization !== undefined,
    setContext: (context) => (ctx.state.idempotency = context),
    signal: () => clientGoneSignal(ctx.res),
  };
}

/** Turns what the route left on `ctx` into bytes, and puts those same bytes back as the body Koa sends. */
function captureResponse(ctx: Context): HttpResponse | Uncaptured {
  const body: unknown = ctx.body;
  if (body instanceof Stream) return { uncaptured: "the route set a stream as the body" };
  let bytes: Buffer;
  if (body === undefined || body === null) bytes = Buffer.alloc(0);
  else if (typeof body === "string") bytes = Buffer.from(body, "utf8");
  else if (body instanceof Uint8Array) ctx.body = bytes = Buffer.from(body);
  else {
    // What Koa itself would send for an object (its Content-Type was set when the route assigned it),
    // put back as the string: Node writes a string with the headers in one go, a Buffer in two.
    const json = JSON.stringify(body);
    bytes = Buffer.from(json, "utf8");
    ctx.body = json;
  }
  return { status: ctx.status, headers: normalizeHeaders(ctx.response.headers), body: bytes };
}

function send(ctx: Context, response: HttpResponse): void {
  ctx.status = response.status;
  ctx.set(response.headers);
  // A Buffer goes out as it is, and Koa keeps the Content-Type set above. An empty one too: a null
  // body would turn a 303 (or any status that may carry a body) into a 204.
  ctx.body = [204, 205, 304].includes(response.status) ? null : wireBody(response.body, response.text);
}
