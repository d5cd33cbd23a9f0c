// Our block on Hono: the `idempotent()` wrapper or the `idempotency()` capture middleware.
import type { Hono } from "hono";
import { idempotency, idempotent } from "@/blocks/idempotency/adapters/hono";
import { blockHandler } from "./block-handler";
import { charge, type PaymentBody } from "./payment";
import { ROUTE, type ServerSpec } from "./spec";

export async function mountHonoBlock(app: Hono, spec: ServerSpec): Promise<() => Promise<void>> {
  const { handler, close } = await blockHandler(spec);
  const getUserId = () => "u_bench";
  if (spec.style === "capture") {
    app.post(ROUTE, idempotency(handler, { getUserId }), async function payment(c) {
      return c.json(charge(await c.req.json<PaymentBody>()), 201);
    });
  } else {
    app.post(
      ROUTE,
      idempotent(handler, {
        getUserId,
        run: async (c) => ({ status: 201, body: charge(await c.req.json<PaymentBody>()) }),
      }),
    );
  }
  return close;
}
