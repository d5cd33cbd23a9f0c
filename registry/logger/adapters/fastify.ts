// Fastify plugin: gives each request an id, echoes it, and logs everything in its hooks and handler under it.
import type { IncomingMessage } from "node:http";
import type { FastifyInstance, FastifyPluginCallback, FastifyRequest } from "fastify";
import { runWithLoggerContext } from "../context";
import { REQUEST_ID_HEADER, resolveRequestId, type RequestIdOptions } from "../request-id";

/**
 * Takes a safe `x-request-id` or generates one, sets it on the reply, and runs the hooks and the
 * handler inside `runWithLoggerContext`. Registered without encapsulation, so it covers every route.
 *
 * @example
 * await app.register(requestIdPlugin);
 * app.post("/orders", async (request, reply) => {
 *   logger.info("creating order"); // carries requestId
 *   return reply.code(201).send(order);
 * });
 */
/** The ids `fastifyRequestId` gave Fastify, by raw request: the plugin takes the same one. */
const chosenByFastify = new WeakMap<IncomingMessage, string>();

/**
 * Fastify's `genReqId`: Fastify's own request lines ("incoming request", "request completed", and
 * `request.log`) then carry the same id as ours in `reqId`, also where our context is not entered
 * yet. Pass the same options as to the plugin.
 *
 * @example
 * const app = Fastify({ loggerInstance: logger, genReqId: fastifyRequestId() });
 * await app.register(requestIdPlugin);
 */
export function fastifyRequestId(options: RequestIdOptions = {}): (raw: IncomingMessage) => string {
  const header = (options.header ?? REQUEST_ID_HEADER).toLowerCase();
  return (raw) => {
    const id = resolveRequestId(raw.headers[header], { generate: options.generate });
    chosenByFastify.set(raw, id);
    return id;
  };
}

export const requestIdPlugin: FastifyPluginCallback<RequestIdOptions> = Object.assign(
  function requestIdPlugin(app: FastifyInstance, options: RequestIdOptions, done: (err?: Error) => void) {
    const header = (options.header ?? REQUEST_ID_HEADER).toLowerCase();
    const ids = new WeakMap<FastifyRequest, string>();

    app.addHook("onRequest", function enterRequestContext(request, reply, next) {
      const id =
        chosenByFastify.get(request.raw) ?? resolveRequestId(request.headers[header], { generate: options.generate });
      ids.set(request, id);
      reply.header(header, id);
      runWithLoggerContext(id, () => next());
    });

    // Fastify reads the body in stream callbacks, outside the context entered above: enter it again.
    app.addHook("preValidation", function reenterRequestContext(request, _reply, next) {
      const id = ids.get(request);
      if (id === undefined) return next();
      runWithLoggerContext(id, () => next());
    });
    done();
  },
  // What fastify-plugin would set: hooks reach routes outside this plugin's scope, without the dependency.
  { [Symbol.for("skip-override")]: true, [Symbol.for("fastify.display-name")]: "request-id" },
);
