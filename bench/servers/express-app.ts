// The Express app for a spec: the bare route (alone or behind the rate limiter), the floor, a peer library, or our block's adapter.
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from "express";
import pg from "pg";
import type { Closable } from "./block-handler";
import { floorRoute } from "./floor-route";
import { charge } from "./payment";
import { expressIdempotencyRoute, nodeIdempotencyRoute } from "./peer-routes";
import { ROUTE, type ServerSpec } from "./spec";

const sendError: ErrorRequestHandler = function sendError(err, _req, res, _next) {
  res.status(res.statusCode >= 400 ? res.statusCode : 500).json({ error: { message: String(err?.message ?? err) } });
};

const payment: RequestHandler = function payment(req, res) {
  res.status(201).json(charge(req.body));
};

export async function expressApp(spec: ServerSpec): Promise<{ app: Express } & Closable> {
  const app = express();
  let close = async () => {};
  if (spec.variant === "bare") {
    app.post(ROUTE, express.json(), payment);
  } else if (spec.variant === "floor") {
    const pool = new pg.Pool({ connectionString: spec.databaseUrl, max: spec.poolSize });
    app.post(ROUTE, express.json(), floorRoute(pool, tableOf(spec)));
    close = () => pool.end();
  } else if (spec.variant === "rate-limited") {
    const { rateLimitedRoute } = await import("./rate-limited-route");
    const limited = await rateLimitedRoute(spec);
    app.post(ROUTE, limited.handler, express.json(), payment);
    close = limited.close;
  } else if (spec.variant === "rate-limiter-flexible") {
    const { rateLimiterFlexibleRoute } = await import("./peer-rate-limiters");
    const limited = await rateLimiterFlexibleRoute(spec);
    app.post(ROUTE, limited.handler, express.json(), payment);
    close = limited.close;
  } else if (spec.variant === "express-idempotency" || spec.variant === "node-idempotency") {
    const peer =
      spec.variant === "express-idempotency" ? await expressIdempotencyRoute(spec) : await nodeIdempotencyRoute(spec);
    app.post(ROUTE, ...peer.handlers);
    close = peer.close;
  } else {
    const { mountExpressBlock } = await import("./express-block");
    close = await mountExpressBlock(app, spec);
  }
  app.use(sendError);
  return { app, close };
}

export function tableOf(spec: ServerSpec): string {
  if (!spec.table) throw new Error(`${spec.variant} on ${spec.backend} needs a table.`);
  return spec.table;
}
