// Our block on Fastify: the `idempotent()` wrapper, or the plugin with a route that opts in through `config`.
import type { FastifyInstance } from "fastify";
import { idempotencyPlugin, idempotent } from "@/blocks/idempotency/adapters/fastify";
import { blockHandler } from "./block-handler";
import { charge, type PaymentBody } from "./payment";
import { ROUTE, type ServerSpec } from "./spec";

export async function mountFastifyBlock(app: FastifyInstance, spec: ServerSpec): Promise<() => Promise<void>> {
  const { handler, close } = await blockHandler(spec);
  const getUserId = () => "u_bench";
  if (spec.style === "capture") {
    await app.register(idempotencyPlugin, { handler, getUserId });
    app.post(ROUTE, { config: { idempotency: {} } }, async function payment(request, reply) {
      return reply.code(201).send(charge(request.body as PaymentBody));
    });
  } else {
    app.post(
      ROUTE,
      idempotent(handler, {
        getUserId,
        run: (request) => ({ status: 201, body: charge(request.body as PaymentBody) }),
      }),
    );
  }
  return close;
}
