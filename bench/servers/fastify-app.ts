// The Fastify app for a spec: the bare route (alone, behind our rate limiter or @fastify/rate-limit) or our block's adapter.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import type { Closable } from "./block-handler";
import { charge, type PaymentBody } from "./payment";
import { ROUTE, type ServerSpec } from "./spec";

export async function fastifyApp(spec: ServerSpec): Promise<{ app: FastifyInstance } & Closable> {
  const app = Fastify({ logger: false });
  const payment = async function payment(request: FastifyRequest, reply: FastifyReply) {
    return reply.code(201).send(charge(request.body as PaymentBody));
  };
  if (spec.variant === "bare") {
    app.post(ROUTE, payment);
    return { app, close: async () => {} };
  }
  if (spec.variant === "rate-limited") {
    const { rateLimitedHook } = await import("./rate-limited-route");
    const limited = await rateLimitedHook(spec);
    app.post(ROUTE, { onRequest: limited.hook }, payment);
    return { app, close: limited.close };
  }
  if (spec.variant === "fastify-rate-limit") {
    const { registerFastifyRateLimit } = await import("./peer-rate-limiters");
    const close = await registerFastifyRateLimit(app, spec);
    app.post(ROUTE, payment);
    return { app, close };
  }
  if (spec.variant !== "block") throw new Error(`No Fastify ${spec.variant} server.`);
  const { mountFastifyBlock } = await import("./fastify-block");
  return { app, close: await mountFastifyBlock(app, spec) };
}
