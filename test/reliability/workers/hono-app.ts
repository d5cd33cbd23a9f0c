// The Hono app a worker serves (on @hono/node-server): POST /payments behind the block's Hono `idempotent` adapter, and GET /_stats.
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { idempotent } from "../../../registry/idempotency/adapters/hono";
import { InjectedFailure, paymentOperation, type PaymentBody } from "./payment-operation";
import type { WorkerRuntime } from "./worker-runtime";

export async function honoServer(runtime: WorkerRuntime): Promise<Server> {
  const app = new Hono();
  const charge = paymentOperation(runtime);

  app.post(
    "/payments",
    // Tells the test what the block decided for each answer, without trusting the block's own counters.
    async function exposeOutcome(c, next) {
      await next();
      const outcome = c.get("idempotency")?.outcome;
      if (outcome) c.res.headers.set("x-idempotency-outcome", outcome);
    },
    bodyLimit({
      maxSize: runtime.config.bodyLimitBytes ?? 100_000,
      onError: (c) => c.json({ error: { code: "BODY_TOO_LARGE", message: "The request body is too large." } }, 413),
    }),
    idempotent(runtime.handler, {
      getUserId: (c) => c.req.header("x-user-id") ?? "u_1",
      requireKey: true,
      isPermanentError: () => false,
      run: async (c) => {
        const context = c.get("idempotency");
        return charge(context?.key ?? "", context?.userId ?? "", (await c.req.json()) as PaymentBody);
      },
    }),
  );
  app.get("/_stats", (c) => c.json(runtime.stats(c.req.query("gc") === "1")));

  app.onError(function sendError(err, c) {
    if (err instanceof InjectedFailure) {
      c.header("x-injected-failure", "1");
      return c.json({ error: { code: "INJECTED_FAILURE", message: err.message } }, 503);
    }
    runtime.logger.error({ status: "ROUTE_ERROR", err }, "route failed");
    return c.json({ error: { code: "INTERNAL_ERROR", message: err.message } }, 500);
  });

  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server;
  await new Promise<void>((resolve) => (server.listening ? resolve() : server.once("listening", () => resolve())));
  return server;
}
