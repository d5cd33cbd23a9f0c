// Fastify 5 adapter: `idempotent()` wraps a route that returns its result; `idempotencyPlugin` captures opted-in routes.
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, RouteHandlerMethod } from "fastify";
import type { IdempotencyHandler } from "../handler";
import type { IdempotencyContext } from "../http/context";
import { normalizeHeaders, toHttpResponse, type HttpResponse, type RouteResult } from "../http/http-response";
import { protectRoute, type Protect, type ProtectedRequest } from "../http/protect";
import { CaptureRun, FastifyRequestView, handedBack, send, type WithSlot } from "./capture-run-fastify";
import type {
  FrameworkDefaults,
  IdempotencyRouteOptions,
  RouteContext,
  WrapperRouteOptions,
  WrapperRun,
} from "../http/route-options";
import { IdempotencySetupError } from "../http/user-id";
import { routeTemplateOf, userIdOf } from "./route-and-user-fastify";

declare module "fastify" {
  interface FastifyRequest {
    /** Set on every request a protected route sees. */
    idempotency?: IdempotencyContext;
  }
  interface FastifyContextConfig {
    /** Opts a route into `idempotencyPlugin`: `true` for the plugin's defaults, or options that override them. */
    idempotency?: FastifyRouteOptions | true;
  }
}

export type FastifyRouteOptions = IdempotencyRouteOptions<FastifyRequest>;

/** `run(request, reply, ctx)` is the route's logic; side effects belong in it. `ctx.signal` aborts if another execution takes the key over; `ctx.tx` is the transaction with `transaction: true`. */
export type FastifyIdempotentOptions<Tx = unknown> = WrapperRouteOptions<FastifyRequest> &
  WrapperRun<[request: FastifyRequest, reply: FastifyReply], Tx>;

export type IdempotencyPluginOptions = FastifyRouteOptions & { handler: IdempotencyHandler<unknown> };

const fastifyDefaults: FrameworkDefaults<FastifyRequest> = {
  userIdOf,
  // The route's template, prefixes included; a request that matched no route has none.
  operationOf: (request) => `${request.method} ${routeTemplateOf(request) ?? "<unmatched>"}`,
  bodyOf: (request) => request.body,
};

/**
 * Wrapper style: a route handler that runs `run` once per key and replays its result to retries.
 *
 * @example
 * app.post("/payments", idempotent(handler, {
 *   getUserId: (request) => request.user.id,
 *   run: async (request) => ({ status: 201, body: await charge(request.body) }),
 * }));
 */
export function idempotent<Tx = unknown>(
  handler: IdempotencyHandler<Tx>,
  options: FastifyIdempotentOptions<Tx>,
): RouteHandlerMethod {
  const { run, ...routeOptions } = options as WrapperRouteOptions<FastifyRequest> & { run: WrapperRequest["run"] };
  const protect = protectRoute(handler, routeOptions, fastifyDefaults);
  return async function idempotentRoute(request, reply) {
    const verdict = await protect(request, new WrapperRequest(request, reply, run));
    if (verdict.kind === "error") throw verdict.error;
    if (verdict.kind !== "uncaptured") send(reply, verdict.response);
    return handedBack(reply);
  };
}

/** A wrapper-style request: the route's `run`, its result serialized once. */
class WrapperRequest extends FastifyRequestView implements ProtectedRequest {
  readonly run: (request: FastifyRequest, reply: FastifyReply, ctx: RouteContext) => RouteResult | Promise<RouteResult>;
  constructor(request: FastifyRequest, reply: FastifyReply, run: WrapperRequest["run"]) {
    super(request, reply);
    this.run = run;
  }
  async produce(ctx: RouteContext): Promise<HttpResponse> {
    return toHttpResponse(await this.run(this.request, this.reply, ctx));
  }
}

/** Marks, in a route's config, that the plugin wrapped its handler. */
const WRAPPED = Symbol("idempotency.wrapped");

/**
 * Capture style: routes with `config: { idempotency }` are protected, and what they send is
 * recorded in `onSend` and replayed; error responses are never recorded. The plugin wraps each
 * such route's handler as the route is declared, so it decides (and reads the user) after every
 * `onRequest` and `preHandler` hook, whatever order plugins were registered in. Register it with
 * `await`, before the routes it protects (a route declared earlier answers 500 with that fix).
 *
 * @example
 * await app.register(idempotencyPlugin, { handler, getUserId: (request) => request.user.id });
 * app.post("/payments", { config: { idempotency: { requireKey: true } } }, async (request, reply) => {
 *   return reply.code(201).send(await charge(request.body));
 * });
 */
export const idempotencyPlugin: FastifyPluginAsync<IdempotencyPluginOptions> = Object.assign(
  function idempotencyPlugin(app: FastifyInstance, { handler, ...defaults }: IdempotencyPluginOptions) {
    // Declared up front so every request object has the same shape (Fastify's advice for speed).
    if (!app.hasRequestDecorator("idempotency")) app.decorateRequest("idempotency", undefined);
    // A property of the request rather than a WeakMap: no hashing and no ephemeron for the GC per request.
    const slot = Symbol("idempotency.running");
    app.decorateRequest(slot, undefined);

    // Resolved as the route is declared, so a misconfigured route fails at startup.
    app.addHook("onRoute", (route) => {
      const config = route.config?.idempotency;
      if (!config) return;
      const protect = protectRoute(
        handler,
        config === true ? defaults : { ...defaults, ...config },
        fastifyDefaults,
        "Fastify's idempotencyPlugin",
      );
      route.handler = capturingHandler(protect, route.handler, slot);
      route.config = { ...route.config, [WRAPPED]: true } as NonNullable<typeof route.config>;
    });

    app.addHook("preHandler", function idempotencyGuard(request, _reply, done) {
      const config = request.routeOptions.config as { idempotency?: unknown; [WRAPPED]?: boolean };
      if (config.idempotency && !config[WRAPPED]) {
        return done(
          new IdempotencySetupError(
            `idempotency: the route ${request.routeOptions.url} has \`config.idempotency\` but was declared before idempotencyPlugin loaded, so it is not protected. \`await app.register(idempotencyPlugin, ...)\` before declaring it.`,
          ),
        );
      }
      done();
    });

    app.addHook("onError", function idempotencyOnError(request, _reply, error, done) {
      const run = (request as WithSlot)[slot];
      if (run) run.thrown = error;
      done();
    });

    // A callback, not an async hook: a request with nothing running (a replay, a refusal, another
    // route) goes on at once, without a promise and a microtask turn in Fastify's hook runner.
    app.addHook("onSend", function idempotencyOnSend(request, reply, payload, done) {
      const run = (request as WithSlot)[slot];
      if (!run) return done(null, payload);
      (request as WithSlot)[slot] = undefined;
      const body = payloadBytes(payload);
      run.capture(body && { status: reply.statusCode, headers: normalizeHeaders(reply.getHeaders()), body });
      // The record is written before the client can see the response and retry.
      run.release(done, payload);
    });
    return Promise.resolve();
  },
  { [Symbol.for("skip-override")]: true, [Symbol.for("fastify.display-name")]: "idempotency" },
);

/** The route's handler behind the idempotency decision: it runs only when the decision lets it. */
function capturingHandler(
  protect: Protect<FastifyRequest>,
  routeHandler: RouteHandlerMethod,
  slot: symbol,
): RouteHandlerMethod {
  return function idempotentHandler(this: FastifyInstance, request, reply): Promise<unknown> {
    return new CaptureRun(request, reply, this, routeHandler, slot).start(protect);
  };
}

function payloadBytes(payload: unknown): Buffer | undefined {
  if (payload === undefined || payload === null) return Buffer.alloc(0);
  if (typeof payload === "string") return Buffer.from(payload, "utf8");
  if (payload instanceof Uint8Array) return Buffer.from(payload);
  return undefined;
}
