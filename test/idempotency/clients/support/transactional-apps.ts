// One POST /orders route with `transaction: true` on every adapter that takes it, for the tests and the killed child alike.
import type { Server } from "node:http";
import Router from "@koa/router";
import { Body, Controller, Module, Post, Res, type INestApplication } from "@nestjs/common";
import { APP_INTERCEPTOR, NestFactory } from "@nestjs/core";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import Koa from "koa";
import { idempotent as expressIdempotent } from "@/blocks/idempotency/adapters/express";
import { idempotent as fastifyIdempotent } from "@/blocks/idempotency/adapters/fastify";
import { idempotent as fetchIdempotent, withIdempotency } from "@/blocks/idempotency/adapters/fetch";
import { idempotent as honoIdempotent } from "@/blocks/idempotency/adapters/hono";
import { idempotent as koaIdempotent } from "@/blocks/idempotency/adapters/koa";
import {
  IDEMPOTENCY_HANDLER,
  Idempotent,
  IdempotencyInterceptor,
  RunContext,
} from "@/blocks/idempotency/adapters/nestjs";
import type { IdempotencyHandler } from "@/blocks/idempotency/handler";
import type { RouteResult } from "@/blocks/idempotency/http/http-response";
import type { TransactionContext } from "@/blocks/idempotency/operation-context";

/** What the routes need of a transaction: PGlite's `Transaction` and pg's `PoolClient` both have it. */
export type Queryable = { query(text: string, params?: unknown[]): Promise<unknown> };
/** The route's logic: a write on the transaction the route was handed, then its answer (or a throw). */
export type Logic = (tx: Queryable, key: string, amount: number) => Promise<RouteResult>;
export type Reply = { status: number; text: string };
export type TransactionalApp = {
  post(key: string | undefined, body: { amount: number }): Promise<Reply>;
  close(): Promise<void>;
};
type Start = (handler: IdempotencyHandler<Queryable>, logic: Logic) => Promise<TransactionalApp>;

const getUserId = () => "u_1";
const amountOf = (body: unknown) => (body as { amount: number }).amount;
const jsonHeaders = (key: string | undefined): Record<string, string> => ({
  "content-type": "application/json",
  ...(key === undefined ? {} : { "idempotency-key": key }),
});

export const ADAPTERS = [
  "express",
  "fastify",
  "hono",
  "koa",
  "nestjs",
  "fetch idempotent",
  "fetch withIdempotency",
] as const;
export type AdapterName = (typeof ADAPTERS)[number];

export const transactionalApps: Record<AdapterName, Start> = {
  async express(handler, logic) {
    const app = express();
    app.post(
      "/orders",
      express.json(),
      expressIdempotent(handler, {
        getUserId,
        transaction: true,
        run: (req, { tx, key }) => logic(tx, key.key, amountOf(req.body)),
      }),
    );
    app.use(
      ((err, _req, res, _next) => void res.status(500).json({ error: String(err) })) as express.ErrorRequestHandler,
    );
    return listening(await listen(app));
  },
  async fastify(handler, logic) {
    const app = Fastify();
    app.post(
      "/orders",
      fastifyIdempotent(handler, {
        getUserId,
        transaction: true,
        run: (request, _reply, { tx, key }) => logic(tx, key.key, amountOf(request.body)),
      }),
    );
    await app.ready();
    return {
      async post(key, body) {
        const res = await app.inject({ method: "POST", url: "/orders", headers: jsonHeaders(key), payload: body });
        return { status: res.statusCode, text: res.body };
      },
      close: () => app.close(),
    };
  },
  async hono(handler, logic) {
    const app = new Hono();
    app.post(
      "/orders",
      honoIdempotent(handler, {
        getUserId,
        transaction: true,
        run: async (c, { tx, key }) => logic(tx, key.key, amountOf(await c.req.json())),
      }),
    );
    app.onError((err, c) => c.json({ error: String(err) }, 500));
    return fetchApp((request) => app.request(request));
  },
  async koa(handler, logic) {
    const app = new Koa();
    app.use(async (ctx, next) => {
      try {
        const chunks: Buffer[] = [];
        for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
        (ctx.request as { body?: unknown }).body =
          chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
        await next();
      } catch (err) {
        ctx.status = 500;
        ctx.body = { error: String(err) };
      }
    });
    const router = new Router();
    router.post(
      "/orders",
      koaIdempotent(handler, {
        getUserId,
        transaction: true,
        run: (ctx, { tx, key }) => logic(tx, key.key, amountOf((ctx.request as { body?: unknown }).body)),
      }),
    );
    app.use(router.routes());
    return listening(app.listen(0, "127.0.0.1"));
  },
  async nestjs(handler, logic) {
    @Controller("orders")
    class OrdersController {
      @Post()
      @Idempotent({ getUserId, transaction: true })
      async create(
        @Body() body: { amount: number },
        @Res({ passthrough: true }) res: { status(code: number): unknown },
        @RunContext() ctx: TransactionContext<Queryable>,
      ) {
        const result = await logic(ctx.tx, ctx.key.key, body.amount);
        res.status(result.status ?? 200);
        return result.body;
      }
    }
    @Module({
      controllers: [OrdersController],
      providers: [
        { provide: IDEMPOTENCY_HANDLER, useValue: handler },
        { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
      ],
    })
    class AppModule {}
    const app: INestApplication = await NestFactory.create(AppModule, { logger: false });
    await app.listen(0, "127.0.0.1");
    return { ...listening(app.getHttpServer() as Server), close: () => app.close() };
  },
  async "fetch idempotent"(handler, logic) {
    const route = fetchIdempotent(handler, {
      getUserId,
      getOperation: () => "POST /orders",
      transaction: true,
      run: async (request, _context, { tx, key }) => logic(tx, key.key, amountOf(await request.json())),
    });
    return fetchApp(async (request) =>
      route(request, undefined).catch((err: unknown) => Response.json({ error: String(err) }, { status: 500 })),
    );
  },
  async "fetch withIdempotency"(handler, logic) {
    const route = withIdempotency(
      handler,
      { getUserId, getOperation: () => "POST /orders", transaction: true },
      async (request, _context: undefined, { tx, key }) => {
        const result = await logic(tx, key.key, amountOf(await request.json()));
        return Response.json(result.body, { status: result.status ?? 200 });
      },
    );
    return fetchApp(async (request) =>
      route(request, undefined).catch((err: unknown) => Response.json({ error: String(err) }, { status: 500 })),
    );
  },
};

function listen(app: express.Express): Promise<Server> {
  return new Promise((resolve) => {
    const server = app.listen(0, "127.0.0.1", () => resolve(server));
  });
}

function listening(server: Server): TransactionalApp {
  const url = () => `http://127.0.0.1:${(server.address() as { port: number }).port}/orders`;
  return {
    async post(key, body) {
      if (!server.listening) await new Promise((resolve) => server.once("listening", resolve));
      const res = await fetch(url(), { method: "POST", headers: jsonHeaders(key), body: JSON.stringify(body) });
      return { status: res.status, text: await res.text() };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function fetchApp(handle: (request: Request) => Response | Promise<Response>): TransactionalApp {
  return {
    async post(key, body) {
      const res = await handle(
        new Request("http://localhost/orders", {
          method: "POST",
          headers: jsonHeaders(key),
          body: JSON.stringify(body),
        }),
      );
      return { status: res.status, text: await res.text() };
    },
    close: async () => {},
  };
}
