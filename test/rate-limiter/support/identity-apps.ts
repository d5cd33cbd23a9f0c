// One listening app per framework with an anonymous route under a parametric mount,
// POST /accounts/:accountId/payments, for the identity tests (client address, route template). Each app
// trusts every proxy in its framework's own setting, as this block's README once advised: the limiter
// must not take its caller from there.
import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import Router from "@koa/router";
import { serve } from "@hono/node-server";
import { Controller, HttpCode, Module, Post, type INestApplication } from "@nestjs/common";
import { APP_INTERCEPTOR, NestFactory } from "@nestjs/core";
import { FastifyAdapter } from "@nestjs/platform-fastify";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import Koa from "koa";
import { rateLimit as expressRateLimit } from "@/blocks/rate-limiter/adapters/express";
import { rateLimit as fastifyRateLimit } from "@/blocks/rate-limiter/adapters/fastify";
import { withRateLimit } from "@/blocks/rate-limiter/adapters/fetch";
import { rateLimit as honoRateLimit } from "@/blocks/rate-limiter/adapters/hono";
import { rateLimit as koaRateLimit } from "@/blocks/rate-limiter/adapters/koa";
import { RATE_LIMITERS, RateLimit, RateLimitInterceptor } from "@/blocks/rate-limiter/adapters/nestjs";
import type { RateLimitRouteOptions } from "@/blocks/rate-limiter/http/limit-route";
import type { RateLimiter } from "@/blocks/rate-limiter/limiter";

/** Route options that read no framework request: the same value works on every adapter. */
type Options = Omit<RateLimitRouteOptions<unknown>, "getUserId" | "getRoute" | "getKey">;
export type IdentityApp = { base: string; close(): Promise<void> };
export type IdentityFramework = { name: string; serve(limiter: RateLimiter, options: Options): Promise<IdentityApp> };

async function listening(server: Server): Promise<IdentityApp> {
  if (!server.listening) await once(server, "listening");
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function serveNest(
  limiter: RateLimiter,
  options: Options,
  platform: "express" | "fastify",
): Promise<IdentityApp> {
  @Controller("accounts/:accountId/payments")
  class PaymentsController {
    @Post()
    @HttpCode(201)
    @RateLimit("payments", options)
    pay() {
      return { ok: true };
    }
  }
  @Module({
    controllers: [PaymentsController],
    providers: [
      { provide: RATE_LIMITERS, useValue: { payments: limiter } },
      { provide: APP_INTERCEPTOR, useClass: RateLimitInterceptor },
    ],
  })
  class AppModule {}
  const app: INestApplication =
    platform === "express"
      ? await NestFactory.create(AppModule, { logger: false })
      : await NestFactory.create(AppModule, new FastifyAdapter({ trustProxy: true }), { logger: false });
  if (platform === "express") (app.getHttpAdapter().getInstance() as express.Express).set("trust proxy", true);
  await app.listen(0, "127.0.0.1");
  return { base: (await app.getUrl()).replace("[::1]", "127.0.0.1"), close: () => app.close() };
}

export const identityFrameworks: IdentityFramework[] = [
  {
    name: "Express",
    async serve(limiter, options) {
      const accounts = express.Router();
      accounts.post(
        "/payments",
        expressRateLimit(limiter, options),
        (_req, res) => void res.status(201).json({ ok: true }),
      );
      const app = express();
      app.set("trust proxy", true);
      app.use("/accounts/:accountId", accounts);
      return listening(app.listen(0, "127.0.0.1"));
    },
  },
  {
    name: "Fastify",
    async serve(limiter, options) {
      const app = Fastify({ trustProxy: true });
      await app.register(
        async (accounts) => {
          accounts.post("/payments", { onRequest: fastifyRateLimit(limiter, options) }, async (_request, reply) =>
            reply.code(201).send({ ok: true }),
          );
        },
        { prefix: "/accounts/:accountId" },
      );
      await app.listen({ port: 0, host: "127.0.0.1" });
      return { base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
    },
  },
  {
    name: "Hono (@hono/node-server)",
    async serve(limiter, options) {
      const accounts = new Hono();
      accounts.post("/payments", honoRateLimit(limiter, options), (c) => c.json({ ok: true }, 201));
      const app = new Hono();
      app.route("/accounts/:accountId", accounts);
      return listening(serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server);
    },
  },
  {
    name: "Koa",
    async serve(limiter, options) {
      const router = new Router({ prefix: "/accounts/:accountId" });
      router.post("/payments", koaRateLimit(limiter, options), (ctx) => {
        ctx.status = 201;
        ctx.body = { ok: true };
      });
      const app = new Koa({ proxy: true });
      app.use(router.routes());
      return listening(app.listen(0, "127.0.0.1"));
    },
  },
  { name: "NestJS (Express)", serve: (limiter, options) => serveNest(limiter, options, "express") },
  { name: "NestJS (Fastify)", serve: (limiter, options) => serveNest(limiter, options, "fastify") },
];

/**
 * The fetch adapter over a real listener, for the route options that need no client address (a fetch runtime
 * has none): every request is one anonymous caller of the route's template.
 */
export const fetchApp: IdentityFramework = {
  name: "fetch (served by @hono/node-server)",
  async serve(limiter, options) {
    const POST = withRateLimit(
      limiter,
      { ...options, getUserId: () => "anonymous", getRoute: () => "POST /accounts/[accountId]/payments" },
      () => Response.json({ ok: true }, { status: 201 }),
    );
    return listening(serve({ fetch: (request: Request) => POST(request), port: 0, hostname: "127.0.0.1" }) as Server);
  },
};
