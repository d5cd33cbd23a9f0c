// The Koa app for a spec (with @koa/router): the bare route or our block's adapter, wrapper or capture style.
import type { Server } from "node:http";
import Router from "@koa/router";
import Koa from "koa";
import { idempotency, idempotent } from "@/blocks/idempotency/adapters/koa";
import type { Closable } from "./block-handler";
import { blockHandler } from "./block-handler";
import { charge, type PaymentBody } from "./payment";
import { ROUTE, type ServerSpec } from "./spec";

/** The least a JSON body parser does (the app would mount @koa/bodyparser), the same for every Koa route. */
const readJson: Koa.Middleware = async (ctx, next) => {
  let text = "";
  for await (const chunk of ctx.req) text += String(chunk);
  (ctx.request as { body?: unknown }).body = JSON.parse(text);
  await next();
};

const bodyOf = (ctx: Koa.Context) => (ctx.request as { body?: unknown }).body as PaymentBody;

function payment(ctx: Koa.Context): void {
  ctx.status = 201;
  ctx.body = charge(bodyOf(ctx));
}

export async function koaServer(spec: ServerSpec): Promise<{ server: Server } & Closable> {
  const router = new Router();
  let close = async () => {};
  if (spec.variant === "bare") {
    router.post(ROUTE, payment);
  } else if (spec.variant === "block") {
    const block = await blockHandler(spec);
    close = block.close;
    const getUserId = () => "u_bench";
    if (spec.style === "capture") router.post(ROUTE, idempotency(block.handler, { getUserId }), payment);
    else
      router.post(
        ROUTE,
        idempotent(block.handler, { getUserId, run: (ctx) => ({ status: 201, body: charge(bodyOf(ctx)) }) }),
      );
  } else {
    throw new Error(`No Koa ${spec.variant} server.`);
  }
  const app = new Koa().use(readJson).use(router.routes());
  return { server: app.listen(0, "127.0.0.1"), close };
}
