// The Hono app for a spec, served by @hono/node-server: the bare route, our block's adapter, or a route answered by a problem handler.
import { once } from "node:events";
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import type { Closable } from "./block-handler";
import { charge, type PaymentBody } from "./payment";
import { ROUTE, type ServerSpec } from "./spec";

export async function honoServer(spec: ServerSpec): Promise<{ server: Server } & Closable> {
  const app = new Hono();
  let close = async () => {};
  if (spec.variant === "bare") {
    app.post(ROUTE, async function payment(c) {
      return c.json(charge(await c.req.json<PaymentBody>()), 201);
    });
  } else if (spec.variant === "error-handler" || spec.variant === "hono-problem-details") {
    const { mountProblemRoute } = await import("./problem-routes");
    await mountProblemRoute(app, spec);
  } else if (spec.variant === "block") {
    const { mountHonoBlock } = await import("./hono-block");
    close = await mountHonoBlock(app, spec);
  } else {
    throw new Error(`No Hono ${spec.variant} server.`);
  }
  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server;
  await once(server, "listening");
  return { server, close };
}
