// The HTTP conformance suite on Koa 3 with @koa/router, through a real listener on port 0, plus Koa-only cases.
import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import Router from "@koa/router";
import Koa, { type Context, type Middleware } from "koa";
import { afterEach, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import type { IdempotencyContext } from "@/blocks/idempotency/http/context";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import {
  isPermanentRouteError,
  overHttp,
  routeResult,
  runHttpConformance,
  type HttpDriver,
  type RouteReply,
  type TestApp,
} from "../support/http-conformance";
import type { RouteContext } from "@/blocks/idempotency/http/route-options";
import { idempotency, idempotent } from "@/blocks/idempotency/adapters/koa";

type State = { user?: { id: string } };

const koaDriver: HttpDriver = {
  captureSeesThrownErrors: true,
  async start({ handler, style, routes }) {
    const { app, contexts } = baseApp();
    const router = new Router();
    for (const route of routes) {
      const options = {
        ...route.options,
        isPermanentError: isPermanentRouteError,
        ...(!route.defaultUserId && { getUserId: (ctx: Context) => (ctx.state as State).user!.id }),
      };
      const method = route.method ?? "POST";
      if (style === "wrapper") {
        router.register(
          route.path,
          [method],
          idempotent(handler, {
            ...options,
            run: async (...args: unknown[]) => routeResult(await route.logic(args.at(-1) as RouteContext)),
          }),
        );
      } else {
        // Capture style as a Koa app writes it: the route throws or sets ctx.status / ctx.body.
        router.register(
          route.path,
          [method],
          [idempotency(handler, options), async (ctx) => send(ctx, await route.logic())],
        );
      }
    }
    app.use(router.routes());
    return listen(app, contexts);
  },
};

/** Error handling, context reporting, a JSON body parser and the auth step, as a Koa app has them. */
function baseApp() {
  const app = new Koa();
  const contexts = new Map<string, () => IdempotencyContext | undefined>();
  app.use(async function frameworkErrorHandler(ctx, next) {
    contexts.set(ctx.get("x-test-id"), () => ctx.state.idempotency);
    try {
      await next();
    } catch (err) {
      const { status, statusCode, message } = err as { status?: number; statusCode?: number; message: string };
      ctx.status = status ?? statusCode ?? 500;
      ctx.body = { frameworkError: message };
    }
  });
  app.use(jsonBody);
  app.use(async function authenticate(ctx, next) {
    const id = ctx.get("x-user-id");
    if (id) (ctx.state as State).user = { id };
    await next();
  });
  return { app, contexts };
}

/** What @koa/bodyparser does for JSON: `ctx.request.body`, and a 400 for a malformed body. */
const jsonBody: Middleware = async function jsonBody(ctx, next) {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  try {
    (ctx.request as { body?: unknown }).body = text === "" ? undefined : JSON.parse(text);
  } catch {
    ctx.throw(400, "malformed JSON");
  }
  await next();
};

function send(ctx: Context, reply: RouteReply): void {
  ctx.status = reply.status ?? 200;
  ctx.set(reply.headers ?? {});
  if (reply.stream) ctx.body = Readable.from(reply.stream);
  else if (typeof reply.body === "string") ctx.body = reply.body;
  else ctx.body = reply.body;
}

function listen(app: Koa, contexts: Map<string, () => IdempotencyContext | undefined>): Promise<TestApp> {
  return overHttp(app.listen(0, "127.0.0.1"), contexts);
}

runHttpConformance(koaDriver);

describe("Koa", () => {
  const apps: TestApp[] = [];
  afterEach(async () => void (await Promise.all(apps.splice(0).map((app) => app.close()))));

  async function start(mount: (router: Router, handler: IdempotencyHandler) => void) {
    const { app, contexts } = baseApp();
    const router = new Router({ prefix: "/orders" });
    mount(router, new IdempotencyHandler(new MemoryStore()));
    app.use(router.routes());
    const testApp = await listen(app, contexts);
    apps.push(testApp);
    return testApp;
  }

  it("names the operation after the router's template, prefix included, never the concrete path", async () => {
    const app = await start((router, handler) => {
      router.post("/:id/refunds", idempotency(handler, { getUserId: () => "u_1" }), (ctx) => {
        ctx.status = 201;
        ctx.body = { refunded: ctx.params.id };
      });
    });
    const response = await app.request({ key: randomUUID(), path: "/orders/o_1/refunds" });
    expect(response.status).toBe(201);
    expect(response.context?.operation).toBe("POST /orders/:id/refunds");
  });

  it("without a router route, asks for getOperation instead of naming the concrete path", async () => {
    const { app, contexts } = baseApp();
    app.use(idempotency(new IdempotencyHandler(new MemoryStore()), { getUserId: () => "u_1" }));
    const testApp = await listen(app, contexts);
    apps.push(testApp);
    const response = await testApp.request({ key: randomUUID(), path: "/orders/o_1/refunds" });
    expect(response.status).toBe(500);
    expect(response.json()).toMatchObject({ frameworkError: expect.stringContaining("getOperation") });
  });

  it("fails the key when the route throws ctx.throw(422), and frees it on ctx.throw(503)", async () => {
    let runs = 0;
    const app = await start((router, handler) => {
      router.post("/:id/declined", idempotency(handler, { getUserId: () => "u_1" }), (ctx) =>
        ctx.throw(422, `declined ${++runs}`),
      );
      router.post("/:id/busy", idempotency(handler, { getUserId: () => "u_1" }), (ctx) =>
        ctx.throw(503, `busy ${++runs}`),
      );
    });
    const key = randomUUID();
    expect((await app.request({ key, path: "/orders/o_1/declined" })).status).toBe(422);
    expect((await app.request({ key, path: "/orders/o_1/declined" })).json()).toMatchObject({
      error: { code: "REQUEST_FAILED" },
    });
    expect((await app.request({ key, path: "/orders/o_1/busy" })).status).toBe(503);
    expect((await app.request({ key, path: "/orders/o_1/busy" })).status).toBe(503);
    expect(runs).toBe(3);
  });
});
