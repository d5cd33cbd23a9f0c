// Fastify 5 adapter: `idempotent()` wraps a route that returns its result; `idempotencyPlugin` captures opted-in routes.
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, RouteHandlerMethod } from "fastify";
import type { IdempotencyHandler } from "../handler";
import type { IdempotencyContext } from "../http/context";
import { normalizeHeaders, toHttpResponse, type HttpResponse, type RouteResult } from "../http/http-response";
import { IDEMPOTENCY_KEY_HEADER } from "../http/key-header";
import { protectRoute, UncapturableResponseError, type Protect, type ProtectOutcome } from "../http/protect";
import type { FrameworkDefaults, IdempotencyRouteOptions, WrapperRouteOptions, WrapperRun } from "../http/route-options";

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

/** `run(request, reply, signal)` is the route's logic; side effects belong in it. `signal` aborts if another execution takes the key over. */
export type FastifyIdempotentOptions<Tx = unknown> = WrapperRouteOptions<FastifyRequest> & WrapperRun<[request: FastifyRequest, reply: FastifyReply], Tx>;

export type IdempotencyPluginOptions = FastifyRouteOptions & { handler: IdempotencyHandler };

const fastifyDefaults: FrameworkDefaults<FastifyRequest> = {
  userIdOf: (request) => (request as { user?: { id?: unknown } }).user?.id,
  operationOf: (request) => `${request.method} ${request.routeOptions.url ?? request.url}`,
  bodyOf: (request) => request.body,
};

/**
 * Wrapper style: a route handler that runs `run` at most once per key and replays its result.
 *
 * @example
 * app.post("/payments", idempotent(handler, {
 *   getUserId: (request) => request.user.id,
 *   run: async (request) => ({ status: 201, body: await charge(request.body) }),
 * }));
 */
export function idempotent<Tx = unknown>(handler: IdempotencyHandler<Tx>, options: FastifyIdempotentOptions<Tx>): RouteHandlerMethod {
  const { run, ...routeOptions } = options as WrapperRouteOptions<FastifyRequest> & {
    run: (request: FastifyRequest, reply: FastifyReply, signal: AbortSignal, tx: Tx) => RouteResult | Promise<RouteResult>;
  };
  const protect = protectRoute(handler, routeOptions, fastifyDefaults);
  return async function idempotentRoute(request, reply) {
    const outcome = await protect(request, {
      keyHeader: request.headers[IDEMPOTENCY_KEY_HEADER],
      setContext: (context) => (request.idempotency = context),
      produce: async (signal, tx) => toHttpResponse(await run(request, reply, signal, tx as Tx)),
    });
    if (outcome.kind === "error") throw outcome.error;
    return outcome.response ? send(reply, outcome.response) : reply;
  };
}

/** A protected request whose route is running: its response is captured in onSend. */
type Running = { capture(response: HttpResponse | undefined): void; outcome: Promise<ProtectOutcome> };

/**
 * Capture style: routes with `config: { idempotency }` are protected, and what they send is
 * recorded in `onSend` and replayed; error responses are never recorded. Registered without
 * encapsulation, so it covers the routes of the instance it is registered on. Authenticate in an
 * `onRequest` hook: this plugin reads the user in `preHandler`.
 *
 * @example
 * await app.register(idempotencyPlugin, { handler, getUserId: (request) => request.user.id });
 * app.post("/payments", { config: { idempotency: { requireKey: true } } }, async (request, reply) => {
 *   return reply.code(201).send(await charge(request.body));
 * });
 */
export const idempotencyPlugin: FastifyPluginAsync<IdempotencyPluginOptions> = Object.assign(
  async function idempotencyPlugin(app: FastifyInstance, { handler, ...defaults }: IdempotencyPluginOptions) {
    // Declared up front so every request object has the same shape (Fastify's advice for speed).
    if (!app.hasRequestDecorator("idempotency")) app.decorateRequest("idempotency", undefined);
    const protections = new WeakMap<object, Protect<FastifyRequest>>();
    const running = new WeakMap<FastifyRequest, Running>();
    const protectionOf = (config: FastifyRouteOptions | true) => {
      const routeOptions = config === true ? defaults : config;
      let protect = protections.get(routeOptions);
      if (!protect) {
        protect = protectRoute(handler, { ...defaults, ...routeOptions }, fastifyDefaults);
        protections.set(routeOptions, protect);
      }
      return protect;
    };

    // Resolving at registration makes a misconfigured route fail at startup; routes registered
    // before the plugin finished loading are resolved on their first request instead.
    app.addHook("onRoute", (route) => void (route.config?.idempotency && protectionOf(route.config.idempotency)));

    app.addHook("preHandler", async function idempotencyPreHandler(request, reply) {
      const config = request.routeOptions.config.idempotency;
      if (!config) return;
      let started!: () => void;
      const routeStarted = new Promise<undefined>((resolve) => (started = () => resolve(undefined)));
      let capture!: Running["capture"];
      const response = new Promise<HttpResponse>((resolve, reject) => {
        capture = (captured) => (captured ? resolve(captured) : reject(new UncapturableResponseError("the route sent a stream or hijacked the reply")));
      });
      const outcome = protectionOf(config)(request, {
        keyHeader: request.headers[IDEMPOTENCY_KEY_HEADER],
        setContext: (context) => (request.idempotency = context),
        produce: () => {
          started();
          return response;
        },
      });
      // Either the route may run now (its response arrives in onSend), or the answer is already known.
      const decided = await Promise.race([routeStarted, outcome]);
      if (!decided) return void running.set(request, { capture, outcome });
      if (decided.kind === "error") throw decided.error;
      if (decided.response) return send(reply, decided.response);
    });

    app.addHook("onSend", async function idempotencyOnSend(request, reply, payload) {
      const run = running.get(request);
      if (!run) return payload;
      running.delete(request);
      const body = payloadBytes(payload);
      run.capture(body && { status: reply.statusCode, headers: normalizeHeaders(reply.getHeaders()), body });
      // The record is written before the client can see the response and retry.
      await run.outcome;
      return payload;
    });

    // A hijacked reply skips onSend: free the key rather than hold it forever.
    app.addHook("onResponse", async function idempotencyOnResponse(request) {
      running.get(request)?.capture(undefined);
      running.delete(request);
    });
  },
  { [Symbol.for("skip-override")]: true, [Symbol.for("fastify.display-name")]: "idempotency" },
);

function payloadBytes(payload: unknown): Buffer | undefined {
  if (payload === undefined || payload === null) return Buffer.alloc(0);
  if (typeof payload === "string") return Buffer.from(payload, "utf8");
  if (payload instanceof Uint8Array) return Buffer.from(payload);
  return undefined;
}

function send(reply: FastifyReply, response: HttpResponse): FastifyReply {
  return reply.code(response.status).headers(response.headers).send(response.body);
}
