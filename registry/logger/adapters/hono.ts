// Hono middleware: gives each request an id, echoes it, and logs everything downstream under it.
import type { MiddlewareHandler } from "hono";
import { runWithLoggerContext } from "../context";
import { REQUEST_ID_HEADER, resolveRequestId, type RequestIdOptions } from "../request-id";

declare module "hono" {
  interface ContextVariableMap {
    requestId: string;
  }
}

/**
 * Takes a safe `x-request-id` or generates one, sets it on the response and as
 * `c.get("requestId")`, and runs the rest of the chain inside `runWithLoggerContext`.
 *
 * @example
 * app.use(requestId());
 * app.post("/orders", (c) => {
 *   logger.info("creating order"); // carries requestId
 *   return c.json(order, 201);
 * });
 */
export function requestId(options: RequestIdOptions = {}): MiddlewareHandler {
  const header = options.header ?? REQUEST_ID_HEADER;
  const { generate } = options;
  return async function requestIdMiddleware(c, next) {
    const id = resolveRequestId(c.req.header(header), { generate });
    c.set("requestId", id);
    c.header(header, id);
    await runWithLoggerContext(id, next);
  };
}
