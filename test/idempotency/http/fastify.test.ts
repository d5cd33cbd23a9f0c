// The HTTP conformance suite on Fastify 5, through `app.inject()`, plus Fastify-only cases.
import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import Fastify, { type FastifyReply, type FastifyRequest } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { MemoryStore } from "@/blocks/idempotency/stores/memory-store";
import { isPermanentRouteError, routeResult, runHttpConformance, testResponse, toFetchRequest, type HttpDriver, type RouteReply, type TestApp } from "../support/http-conformance";
import { idempotencyPlugin, idempotent } from "@/blocks/idempotency/adapters/fastify";

type WithUser = FastifyRequest & { user?: { id: string } };

const fastifyDriver: HttpDriver = {
  async start({ handler, style, routes }) {
    const app = Fastify();
    app.addHook("onRequest", async function authenticate(request: WithUser) {
      const id = request.headers["x-user-id"];
      if (typeof id === "string") request.user = { id };
    });
    app.setErrorHandler(function frameworkErrorHandler(err: Error & { status?: number; statusCode?: number }, _request, reply) {
      return reply.code(err.status ?? err.statusCode ?? 500).send({ frameworkError: err.message });
    });
    if (style === "capture") await app.register(idempotencyPlugin, { handler });
    for (const route of routes) {
      const options = { ...route.options, isPermanentError: isPermanentRouteError, ...(!route.defaultUserId && { getUserId: (request: WithUser) => request.user!.id }) };
      const method = route.method ?? "POST";
      if (style === "wrapper") {
        app.route({ method, url: route.path, handler: idempotent(handler, { ...options, run: async () => routeResult(await route.logic()) }) });
      } else {
        app.route({ method, url: route.path, config: { idempotency: options }, handler: async (_request, reply) => send(reply, await route.logic()) });
      }
    }
    return inject(app);
  },
};

function send(reply: FastifyReply, response: RouteReply): FastifyReply {
  reply.code(response.status ?? 200).headers(response.headers ?? {});
  if (response.stream) return reply.send(Readable.from(response.stream));
  if (typeof response.body === "string") return reply.type("text/plain; charset=utf-8").send(response.body);
  return reply.send(response.body);
}

async function inject(app: ReturnType<typeof Fastify>): Promise<TestApp> {
  const contexts = new Map<string, FastifyRequest>();
  app.addHook("onRequest", async (request: FastifyRequest) => void contexts.set(String(request.headers["x-test-id"]), request));
  await app.ready();
  return {
    async request(request) {
      const { path, testId, init } = toFetchRequest(request);
      const response = await app.inject({ method: init.method as "POST", url: path, headers: init.headers, payload: init.body });
      const headers = new Headers();
      for (const [name, value] of Object.entries(response.headers)) {
        for (const item of [value ?? []].flat()) headers.append(name, String(item));
      }
      return testResponse(response.statusCode, headers, response.rawPayload, contexts.get(testId)?.idempotency);
    },
    close: () => app.close(),
  };
}

runHttpConformance(fastifyDriver);

describe("Fastify capture", () => {
  const apps: TestApp[] = [];
  afterEach(async () => void (await Promise.all(apps.splice(0).map((app) => app.close()))));

  it("protects only the routes that opt in, with the plugin's defaults", async () => {
    const app = Fastify();
    await app.register(idempotencyPlugin, { handler: new IdempotencyHandler(new MemoryStore()), getUserId: () => "u_1" });
    let runs = 0;
    app.post("/payments", { config: { idempotency: true } }, async () => ({ run: ++runs }));
    app.post("/search", async () => ({ run: ++runs }));
    const testApp = await inject(app);
    apps.push(testApp);
    const key = randomUUID();
    expect((await testApp.request({ key })).json()).toEqual({ run: 1 });
    expect((await testApp.request({ key })).json()).toEqual({ run: 1 });
    expect((await testApp.request({ key, path: "/search" })).json()).toEqual({ run: 2 });
    expect((await testApp.request({ key, path: "/search" })).json()).toEqual({ run: 3 });
  });

  it("frees the key of a hijacked reply instead of holding it", async () => {
    const app = Fastify();
    await app.register(idempotencyPlugin, { handler: new IdempotencyHandler(new MemoryStore()), getUserId: () => "u_1" });
    let runs = 0;
    app.post("/payments", { config: { idempotency: true } }, async (_request, reply) => {
      runs++;
      reply.hijack();
      reply.raw.end("raw answer");
    });
    const testApp = await inject(app);
    apps.push(testApp);
    const key = randomUUID();
    const first = await testApp.request({ key });
    const second = await testApp.request({ key });
    expect(first.body.toString()).toBe("raw answer");
    expect(second.body.toString()).toBe("raw answer");
    expect(runs).toBe(2);
  });
});
