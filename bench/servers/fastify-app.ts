// The Fastify app for a spec: the bare route or our block's adapter.
import Fastify, { type FastifyInstance } from "fastify";
import type { Closable } from "./block-handler";
import { charge, type PaymentBody } from "./payment";
import { ROUTE, type ServerSpec } from "./spec";

export async function fastifyApp(spec: ServerSpec): Promise<{ app: FastifyInstance } & Closable> {
  const app = Fastify({ logger: false });
  if (spec.variant === "bare") {
    app.post(ROUTE, async function payment(request, reply) {
      return reply.code(201).send(charge(request.body as PaymentBody));
    });
    return { app, close: async () => {} };
  }
  if (spec.variant !== "block") throw new Error(`No Fastify ${spec.variant} server.`);
  const { mountFastifyBlock } = await import("./fastify-block");
  return { app, close: await mountFastifyBlock(app, spec) };
}
