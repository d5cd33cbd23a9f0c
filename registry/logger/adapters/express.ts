// Express middleware: gives each request an id, echoes it, and logs everything downstream under it.
import type { RequestHandler } from "express";
import { runWithLoggerContext } from "../context";
import { REQUEST_ID_HEADER, resolveRequestId, type RequestIdOptions } from "../request-id";

/**
 * Takes a safe `x-request-id` or generates one, sets it on the response and in
 * `res.locals.requestId`, and runs the rest of the chain inside `runWithLoggerContext`.
 * Mount it first, before body parsers and routes.
 *
 * @example
 * app.use(requestId());
 * app.post("/orders", (req, res) => {
 *   logger.info("creating order"); // carries requestId
 *   res.status(201).json(order);
 * });
 */
export function requestId(options: RequestIdOptions = {}): RequestHandler {
  const header = (options.header ?? REQUEST_ID_HEADER).toLowerCase();
  const { generate } = options;
  return function requestIdMiddleware(req, res, next) {
    const id = resolveRequestId(req.headers[header], { generate });
    res.locals.requestId = id;
    res.setHeader(header, id);
    runWithLoggerContext(id, () => next());
  };
}
