// The Hono app a worker serves (on @hono/node-server): POST /payments behind the block's Hono `idempotent` adapter,
// the hostile-input routes (a path parameter, a signed-in route on the default user lookup) and GET /_stats.
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { Hono, type Context, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { idempotent } from "../../../registry/idempotency/adapters/hono";
import { InjectedFailure, paymentOperation, type PaymentBody } from "./payment-operation";
import type { WorkerRuntime } from "./worker-runtime";

export async function honoServer(runtime: WorkerRuntime): Promise<Server> {
  const app = new Hono();
  const charge = paymentOperation(runtime);

  // Tells the test what the block decided for each answer, without trusting the block's own counters.
  const exposeOutcome: MiddlewareHandler = async function exposeOutcome(c, next) {
    await next();
    const { outcome, operation } = c.get("idempotency") ?? {};
    if (outcome) c.res.headers.set("x-idempotency-outcome", outcome);
    if (operation) c.res.headers.set("x-idempotency-operation", operation);
  };
  const limit = bodyLimit({
    maxSize: runtime.config.bodyLimitBytes ?? 100_000,
    onError: (c) => c.json({ error: { code: "BODY_TOO_LARGE", message: "The request body is too large." } }, 413),
  });
  const run = async (c: Context) => {
    const context = c.get("idempotency");
    return charge(context?.key ?? "", context?.userId ?? "", (await c.req.json()) as PaymentBody);
  };
  const userHeader = (c: Context) => c.req.header("x-user-id") ?? "u_1";

  app.post(
    "/payments",
    exposeOutcome,
    limit,
    idempotent(runtime.handler, { getUserId: userHeader, requireKey: true, isPermanentError: () => false, run }),
  );
  app.post(
    "/accounts/:account/withdrawals",
    exposeOutcome,
    limit,
    idempotent(runtime.handler, { getUserId: userHeader, requireKey: true, run }),
  );
  app.post(
    "/signed-in/payments",
    exposeOutcome,
    limit,
    async function authenticate(c, next) {
      const id = c.req.header("x-user-id");
      if (id) c.set("user" as never, { id } as never);
      await next();
    },
    idempotent(runtime.handler, { allowAnonymous: true, requireKey: true, run }),
  );
  app.get("/_stats", (c) => c.json(runtime.stats(c.req.query("gc") === "1")));

  app.onError(function sendError(err, c) {
    if (err instanceof InjectedFailure) {
      c.header("x-injected-failure", "1");
      return c.json({ error: { code: "INJECTED_FAILURE", message: err.message } }, 503);
    }
    if ((err as { code?: unknown }).code === "IDEMPOTENCY_SETUP") {
      runtime.logger.warn({ status: "SETUP_ERROR", err }, "idempotency setup error");
      return c.json({ error: { code: "IDEMPOTENCY_SETUP", message: err.message } }, 500);
    }
    runtime.logger.error({ status: "ROUTE_ERROR", err }, "route failed");
    return c.json({ error: { code: "INTERNAL_ERROR", message: err.message } }, 500);
  });

  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server;
  await new Promise<void>((resolve) => (server.listening ? resolve() : server.once("listening", () => resolve())));
  return server;
}
