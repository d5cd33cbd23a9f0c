// One small app per framework with a rate-limited route, driven the same way (real listener, inject, request, a call).
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import Router from "@koa/router";
import {
  Controller,
  HttpCode,
  Injectable,
  Module,
  Post,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
} from "@nestjs/common";
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
import {
  RATE_LIMITERS,
  RateLimit,
  RateLimitInterceptor,
  type NestHttpRequest,
} from "@/blocks/rate-limiter/adapters/nestjs";
import type { RateLimiter } from "@/blocks/rate-limiter/limiter";

export type Reply = { status: number; headers: Record<string, string | undefined>; body: unknown };
export type RunningApp = { send(user: string): Promise<Reply>; close(): Promise<void> };
export type Framework = { name: string; serve(limiter: RateLimiter): Promise<RunningApp> };

const HEADERS = ["ratelimit-policy", "ratelimit", "retry-after", "content-type"];

async function fromFetch(res: Response): Promise<Reply> {
  const text = await res.text();
  return {
    status: res.status,
    headers: Object.fromEntries(HEADERS.map((h) => [h, res.headers.get(h) ?? undefined])),
    body: text ? JSON.parse(text) : undefined,
  };
}

/** A listening server's `send`: POST /payments/p_1 as the given user. */
function sender(base: string): RunningApp["send"] {
  return async (user) =>
    fromFetch(await fetch(`${base}/payments/p_1`, { method: "POST", headers: { "x-user": user } }));
}

/** The guard runs before the interceptor: the limiter sees the user it set. */
@Injectable()
class HeaderAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<NestHttpRequest>();
    request.user = { id: String(request.headers["x-user"]) };
    return true;
  }
}

@Controller("payments")
@UseGuards(HeaderAuthGuard)
class PaymentsController {
  @Post(":id")
  @HttpCode(201)
  @RateLimit("payments")
  pay() {
    return { ok: true };
  }
}

async function serveNest(limiter: RateLimiter, platform: "express" | "fastify"): Promise<RunningApp> {
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
      : await NestFactory.create(AppModule, new FastifyAdapter(), { logger: false });
  await app.listen(0, "127.0.0.1");
  return { send: sender((await app.getUrl()).replace("[::1]", "127.0.0.1")), close: () => app.close() };
}

export const frameworks: Framework[] = [
  {
    name: "Express",
    async serve(limiter) {
      const app = express();
      app.post(
        "/payments/:id",
        (req, _res, next) => {
          (req as { user?: { id: string } }).user = { id: req.get("x-user") as string };
          next();
        },
        expressRateLimit(limiter),
        (_req, res) => void res.status(201).json({ ok: true }),
      );
      const server = app.listen(0);
      await new Promise((resolve) => server.once("listening", resolve));
      return {
        send: sender(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
        close: () => new Promise((resolve) => server.close(() => resolve())),
      };
    },
  },
  {
    name: "Fastify",
    async serve(limiter) {
      const app = Fastify();
      app.addHook("onRequest", async (request) => {
        (request as { user?: { id: string } }).user = { id: String(request.headers["x-user"]) };
      });
      app.addHook("onRequest", fastifyRateLimit(limiter));
      app.post("/payments/:id", async (_request, reply) => reply.code(201).send({ ok: true }));
      await app.ready();
      return {
        async send(user) {
          const res = await app.inject({ method: "POST", url: "/payments/p_1", headers: { "x-user": user } });
          const headers = Object.fromEntries(
            HEADERS.map((h) => [h, res.headers[h] === undefined ? undefined : String(res.headers[h])]),
          );
          return { status: res.statusCode, headers, body: res.body ? res.json() : undefined };
        },
        close: () => app.close(),
      };
    },
  },
  {
    name: "Hono",
    async serve(limiter) {
      const app = new Hono();
      app.use("/payments/*", honoRateLimit(limiter, { getUserId: (c) => c.req.header("x-user") }));
      app.post("/payments/:id", (c) => c.json({ ok: true }, 201));
      return {
        send: async (user) =>
          fromFetch(await app.request("/payments/p_1", { method: "POST", headers: { "x-user": user } })),
        close: async () => {},
      };
    },
  },
  {
    name: "Koa",
    async serve(limiter) {
      const app = new Koa();
      const router = new Router();
      router.post(
        "/payments/:id",
        async (ctx, next) => {
          ctx.state.user = { id: ctx.get("x-user") };
          await next();
        },
        koaRateLimit(limiter),
        (ctx) => {
          ctx.status = 201;
          ctx.body = { ok: true };
        },
      );
      app.use(router.routes());
      const server = app.listen(0, "127.0.0.1");
      await once(server, "listening");
      return {
        send: sender(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
        close: () => new Promise((resolve) => server.close(() => resolve())),
      };
    },
  },
  { name: "NestJS (Express)", serve: (limiter) => serveNest(limiter, "express") },
  { name: "NestJS (Fastify)", serve: (limiter) => serveNest(limiter, "fastify") },
  {
    name: "fetch",
    async serve(limiter) {
      // A route handler as Next.js, Bun.serve or Deno.serve calls it: no listener of its own.
      const POST = withRateLimit(
        limiter,
        { getUserId: (request) => request.headers.get("x-user") ?? undefined, getRoute: () => "POST /payments/[id]" },
        () => Response.json({ ok: true }, { status: 201 }),
      );
      return {
        send: async (user) =>
          fromFetch(
            await POST(new Request("http://localhost/payments/p_1", { method: "POST", headers: { "x-user": user } })),
          ),
        close: async () => {},
      };
    },
  },
];
