// The HTTP conformance suite on Hono 4, through `app.request()`, plus Hono-only cases.
import { randomUUID } from "node:crypto";
import { Hono, type Context } from "hono";
import { streamText } from "hono/streaming";
import { describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import type { IdempotencyContext } from "@/blocks/idempotency/http/context";
import { MemoryStore } from "@/blocks/idempotency/stores/memory-store";
import { isPermanentRouteError, routeResult, runHttpConformance, testResponse, toFetchRequest, type HttpDriver, type RouteReply, type TestApp } from "../support/http-conformance";
import { idempotency, idempotent } from "@/blocks/idempotency/adapters/hono";

type Env = { Variables: { user: { id: string } } };

const honoDriver: HttpDriver = {
  async start({ handler, style, routes }) {
    const app = new Hono<Env>();
    const contexts = new Map<string, () => IdempotencyContext | undefined>();
    app.use(async function authenticate(c, next) {
      contexts.set(c.req.header("x-test-id") ?? "", () => c.get("idempotency"));
      const id = c.req.header("x-user-id");
      if (id) c.set("user", { id });
      await next();
    });
    app.onError(function frameworkErrorHandler(err, c) {
      const status = (err as { status?: number }).status ?? 500;
      return c.json({ frameworkError: err.message }, status as 500);
    });
    for (const route of routes) {
      const options = { ...route.options, isPermanentError: isPermanentRouteError, ...(!route.defaultUserId && { getUserId: (c: Context<Env>) => c.get("user").id }) };
      const method = route.method ?? "POST";
      if (style === "wrapper") {
        app.on(method, route.path, idempotent(handler, { ...options, run: async () => routeResult(await route.logic()) }));
      } else {
        app.on(method, route.path, idempotency(handler, options), async (c) => send(c, await route.logic()));
      }
    }
    return request(app, contexts);
  },
};

function send(c: Context, reply: RouteReply): Response | Promise<Response> {
  const status = (reply.status ?? 200) as 200;
  if (reply.stream) {
    const chunks = reply.stream;
    return streamText(c, async (stream) => {
      for (const chunk of chunks) await stream.write(chunk);
    });
  }
  if (typeof reply.body === "string") return c.text(reply.body, status, reply.headers);
  return c.json(reply.body, status, reply.headers);
}

function request(app: Hono<Env>, contexts: Map<string, () => IdempotencyContext | undefined>): TestApp {
  return {
    async request(request) {
      const { path, testId, init } = toFetchRequest(request);
      const response = await app.request(path, init);
      const body = Buffer.from(await response.arrayBuffer());
      return testResponse(response.status, response.headers, body, contexts.get(testId)?.());
    },
    close: async () => {},
  };
}

runHttpConformance(honoDriver);

describe("Hono capture", () => {
  it("names the operation after the handler's route, also when mounted with app.use()", async () => {
    const app = new Hono<Env>();
    const contexts = new Map<string, () => IdempotencyContext | undefined>();
    app.use(async (c, next) => {
      contexts.set(c.req.header("x-test-id") ?? "", () => c.get("idempotency"));
      await next();
    });
    app.use("/orders/*", idempotency(new IdempotencyHandler(new MemoryStore()), { getUserId: () => "u_1" }));
    app.post("/orders/:id/refunds", (c) => c.json({ refunded: c.req.param("id") }, 201));
    const response = await request(app, contexts).request({ key: randomUUID(), path: "/orders/o_1/refunds" });
    expect(response.status).toBe(201);
    expect(response.context?.operation).toBe("POST /orders/:id/refunds");
  });
});
