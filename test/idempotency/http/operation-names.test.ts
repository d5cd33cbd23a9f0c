// The operation and user each adapter scopes a key by, pinned: a changed name would run a retry that spans the deploy twice.
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import Router from "@koa/router";
import express, { type RequestHandler } from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import Koa from "koa";
import { describe, expect, it } from "vitest";
import { idempotency as expressIdempotency } from "@/blocks/idempotency/adapters/express";
import { idempotencyPlugin, idempotent as fastifyIdempotent } from "@/blocks/idempotency/adapters/fastify";
import { idempotency as honoIdempotency } from "@/blocks/idempotency/adapters/hono";
import { idempotency as koaIdempotency } from "@/blocks/idempotency/adapters/koa";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import type { IdempotencyContext } from "@/blocks/idempotency/http/context";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";

const scope = (context: IdempotencyContext | undefined) => [context?.operation, context?.userId];
const headers = () => ({ "idempotency-key": randomUUID() });

/** Each path POSTed once with a fresh key; each route answers the `[operation, userId]` it was protected under. */
async function postAll(server: Server, paths: string[]): Promise<unknown[]> {
  if (!server.listening) await once(server, "listening");
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const scopes: unknown[] = [];
    for (const path of paths)
      scopes.push(await (await fetch(`${base}${path}`, { method: "POST", headers: headers() })).json());
    return scopes;
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe("operation names by framework", () => {
  it("Express: the route's template; under any mounted router, `<router>` and the route's own path", async () => {
    const handler = new IdempotencyHandler(new MemoryStore());
    const answer: RequestHandler = (_req, res) => void res.status(201).json(scope(res.locals.idempotency));
    const app = express();
    app.use((req, _res, next) => (((req as { user?: { id: string } }).user = { id: "u_1" }), next()));
    app.post("/payments/:id", expressIdempotency(handler), answer);
    const accounts = express.Router();
    accounts.post("/withdrawals", expressIdempotency(handler), answer);
    app.use("/accounts/:id", accounts);
    const v1 = express.Router();
    v1.post("/payments", expressIdempotency(handler), answer);
    app.use("/v1", v1);
    expect(
      await postAll(app.listen(0, "127.0.0.1"), ["/payments/p_1", "/accounts/A/withdrawals", "/v1/payments"]),
    ).toEqual([
      ["POST /payments/:id", "u_1"],
      ["POST <router>/withdrawals", "u_1"],
      ["POST <router>/payments", "u_1"],
    ]);
  });

  it("Fastify: the route's template with its prefix, in the plugin and the wrapper", async () => {
    const handler = new IdempotencyHandler(new MemoryStore());
    const app = Fastify();
    app.addHook("onRequest", async (request) => void ((request as { user?: { id: string } }).user = { id: "u_1" }));
    await app.register(idempotencyPlugin, { handler });
    await app.register(
      async (v1) => {
        v1.post("/payments/:id", { config: { idempotency: true } }, async (request, reply) =>
          reply.code(201).send(scope(request.idempotency)),
        );
        v1.post(
          "/refunds/:id",
          fastifyIdempotent(handler, { run: (request) => ({ status: 201, body: scope(request.idempotency) }) }),
        );
      },
      { prefix: "/v1" },
    );
    const scopes: unknown[] = [];
    for (const url of ["/v1/payments/p_1", "/v1/refunds/r_1"])
      scopes.push((await app.inject({ method: "POST", url, headers: headers() })).json());
    await app.close();
    expect(scopes).toEqual([
      ["POST /v1/payments/:id", "u_1"],
      ["POST /v1/refunds/:id", "u_1"],
    ]);
  });

  it("Hono: the handler's route template, also from app.use() and through a sub-app's base path", async () => {
    const handler = new IdempotencyHandler(new MemoryStore());
    const v1 = new Hono();
    v1.post("/payments/:id", honoIdempotency(handler), (c) => c.json(scope(c.get("idempotency")), 201));
    const app = new Hono();
    app.use(async (c, next) => (c.set("user" as never, { id: "u_1" } as never), next()));
    app.use("/orders/*", honoIdempotency(handler));
    app.post("/orders/:id/refunds", (c) => c.json(scope(c.get("idempotency")), 201));
    app.route("/v1", v1);
    const scopes: unknown[] = [];
    for (const path of ["/orders/o_1/refunds", "/v1/payments/p_1"])
      scopes.push(await (await app.request(path, { method: "POST", headers: headers() })).json());
    expect(scopes).toEqual([
      ["POST /orders/:id/refunds", "u_1"],
      ["POST /v1/payments/:id", "u_1"],
    ]);
  });

  it("Koa: @koa/router's template with its prefix", async () => {
    const handler = new IdempotencyHandler(new MemoryStore());
    const app = new Koa();
    app.use((ctx, next) => ((ctx.state.user = { id: "u_1" }), next()));
    const router = new Router({ prefix: "/orders" });
    router.post("/:id/refunds", koaIdempotency(handler), (ctx) => {
      ctx.status = 201;
      ctx.body = scope(ctx.state.idempotency);
    });
    app.use(router.routes());
    expect(await postAll(app.listen(0, "127.0.0.1"), ["/orders/o_1/refunds"])).toEqual([
      ["POST /orders/:id/refunds", "u_1"],
    ]);
  });
});
