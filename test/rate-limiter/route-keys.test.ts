// The route and caller each adapter keys a request by, pinned: a changed key starts every caller's quota afresh.
import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import Router from "@koa/router";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import Koa from "koa";
import { describe, expect, it } from "vitest";
import { rateLimit as expressRateLimit } from "@/blocks/rate-limiter/adapters/express";
import { rateLimit as fastifyRateLimit } from "@/blocks/rate-limiter/adapters/fastify";
import { rateLimit as honoRateLimit } from "@/blocks/rate-limiter/adapters/hono";
import { rateLimit as koaRateLimit } from "@/blocks/rate-limiter/adapters/koa";
import { RateLimiter } from "@/blocks/rate-limiter/limiter";
import { MemoryRateLimitStore } from "@/blocks/rate-limiter/stores/memory-store";
import type { RateLimitStore } from "@/blocks/rate-limiter/types";

/** A limiter whose store remembers each key it was asked for, as `[route, caller]`. */
function recordingLimiter() {
  const store = new MemoryRateLimitStore();
  const keys: unknown[] = [];
  const recording: RateLimitStore = {
    take(key, rate) {
      keys.push(JSON.parse(key.slice("routes:".length)));
      return store.take(key, rate);
    },
  };
  return { limiter: new RateLimiter(recording, { name: "routes", limit: 100, windowMs: 60_000 }), keys };
}

async function postAll(server: Server, paths: string[]): Promise<void> {
  if (!server.listening) await once(server, "listening");
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    for (const path of paths) await (await fetch(`${base}${path}`, { method: "POST" })).arrayBuffer();
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe("route keys by framework", () => {
  it("Express: the route's template, a parametric mount's template, and app-wide one quota per mount", async () => {
    const { limiter, keys } = recordingLimiter();
    const app = express();
    app.use((req, _res, next) => (((req as { user?: { id: string } }).user = { id: "u_1" }), next()));
    app.post("/payments/:id", expressRateLimit(limiter), (_req, res) => void res.sendStatus(201));
    const accounts = express.Router();
    accounts.use(expressRateLimit(limiter));
    accounts.post("/payments", expressRateLimit(limiter), (_req, res) => void res.sendStatus(201));
    app.use("/accounts/:accountId", accounts);
    app.use(expressRateLimit(limiter));
    await postAll(app.listen(0, "127.0.0.1"), ["/payments/p_1", "/accounts/acc_1/payments", "/nowhere"]);
    expect(keys).toEqual([
      ["POST /payments/:id", "user:u_1"],
      ["* /accounts/:accountId", "user:u_1"],
      ["POST /accounts/:accountId/payments", "user:u_1"],
      ["* /", "user:u_1"],
    ]);
  });

  it("Fastify: the route's template with its prefix, also app-wide; a request no route matched as `*`", async () => {
    const { limiter, keys } = recordingLimiter();
    const app = Fastify();
    app.addHook("onRequest", async (request) => void ((request as { user?: { id: string } }).user = { id: "u_1" }));
    app.addHook("onRequest", fastifyRateLimit(limiter));
    await app.register(async (v1) => void v1.post("/payments/:id", async (_request, reply) => reply.code(201).send()), {
      prefix: "/v1",
    });
    for (const url of ["/v1/payments/p_1", "/nowhere"]) await app.inject({ method: "POST", url });
    await app.close();
    expect(keys).toEqual([
      ["POST /v1/payments/:id", "user:u_1"],
      ["POST *", "user:u_1"],
    ]);
  });

  it("Hono: the handler's route template, also from app.use() and through a sub-app's base path", async () => {
    const { limiter, keys } = recordingLimiter();
    const v1 = new Hono();
    v1.post("/payments/:id", honoRateLimit(limiter), (c) => c.body(null, 201));
    const app = new Hono();
    app.use(async (c, next) => (c.set("user" as never, { id: "u_1" } as never), next()));
    app.use("/orders/*", honoRateLimit(limiter));
    app.post("/orders/:id/refunds", (c) => c.body(null, 201));
    app.route("/v1", v1);
    for (const path of ["/orders/o_1/refunds", "/v1/payments/p_1"]) await app.request(path, { method: "POST" });
    expect(keys).toEqual([
      ["POST /orders/:id/refunds", "user:u_1"],
      ["POST /v1/payments/:id", "user:u_1"],
    ]);
  });

  it("Koa: @koa/router's template with its prefix; before the router, one quota for the app", async () => {
    const { limiter, keys } = recordingLimiter();
    const app = new Koa();
    app.use((ctx, next) => ((ctx.state.user = { id: "u_1" }), next()));
    app.use(koaRateLimit(limiter));
    const router = new Router({ prefix: "/orders" });
    router.post("/:id/refunds", koaRateLimit(limiter), (ctx) => void (ctx.status = 201));
    app.use(router.routes());
    await postAll(app.listen(0, "127.0.0.1"), ["/orders/o_1/refunds"]);
    expect(keys).toEqual([
      ["* /", "user:u_1"],
      ["POST /orders/:id/refunds", "user:u_1"],
    ]);
  });
});
