// Our block on Express: the `idempotent()` wrapper or the `idempotency()` capture middleware.
import express, { type Express } from "express";
import { idempotency, idempotent } from "@/blocks/idempotency/adapters/express";
import { blockHandler } from "./block-handler";
import { charge, type PaymentBody } from "./payment";
import { ROUTE, type ServerSpec } from "./spec";

export async function mountExpressBlock(app: Express, spec: ServerSpec): Promise<() => Promise<void>> {
  const { handler, close } = await blockHandler(spec);
  const getUserId = () => "u_bench";
  if (spec.style === "capture") {
    app.post(ROUTE, express.json(), idempotency(handler, { getUserId }), function payment(req, res) {
      res.status(201).json(charge(req.body as PaymentBody));
    });
  } else {
    app.post(
      ROUTE,
      express.json(),
      idempotent(handler, { getUserId, run: (req) => ({ status: 201, body: charge(req.body as PaymentBody) }) }),
    );
  }
  return close;
}
