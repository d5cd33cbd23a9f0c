// The HTTP conformance suite on Fastify 5, through `app.inject()`, plus Fastify-only cases.
import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import Fastify, { type FastifyReply, type FastifyRequest } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import {
  isPermanentRouteError,
  routeResult,
  runHttpConformance,
  testResponse,
  toFetchRequest,
  type HttpDriver,
  type RouteReply,
  type TestApp,
} from "../support/http-conformance";
import type { RouteContext } from "@/blocks/idempotency/http/route-options";
import { idempotencyPlugin, idempotent } from "@/blocks/idempotency/adapters/fastify";

type WithUser = FastifyRequest & { user?: { id: string } };

const fastifyDriver: HttpDriver = {
  captureSeesThrownErrors: true,
  async start({ handler, style, routes }) {
    const app = Fastify();
    app.addHook("onRequest", async function authenticate(request: WithUser) {
      const id = request.headers["x-user-id"];
      if (typeof id === "string") request.user = { id };
    });
    app.setErrorHandler(function frameworkErrorHandler(
      err: Error & { status?: number; statusCode?: number },
      _request,
      reply,
    ) {
      return reply.code(err.status ?? err.statusCode ?? 500).send({ frameworkError: err.message });
    });
    if (style === "capture") await app.register(idempotencyPlugin, { handler });
    for (const route of routes) {
      const options = {
        ...route.options,
        isPermanentError: isPermanentRouteError,
        ...(!route.defaultUserId && { getUserId: (request: WithUser) => request.user!.id }),
      };
      const method = route.method ?? "POST";
      if (style === "wrapper") {
        app.route({
          method,
          url: route.path,
          handler: idempotent(handler, {
            ...options,
            run: async (...args: unknown[]) => routeResult(await route.logic(args.at(-1) as RouteContext)),
          }),
        });
      } else {
        app.route({
          method,
          url: route.path,
          config: { idempotency: options },
          handler: async (_request, reply) => send(reply, await route.logic()),
        });
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
  app.addHook(
    "onRequest",
    async (request: FastifyRequest) => void contexts.set(String(request.headers["x-test-id"]), request),
  );
  await app.ready();
  return {
    async request(request) {
      const { path, testId, init } = toFetchRequest(request);
      const response = await app.inject({
        method: init.method as "POST",
        url: path,
        headers: init.headers,
        payload: init.body,
      });
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
    await app.register(idempotencyPlugin, {
      handler: new IdempotencyHandler(new MemoryStore()),
      getUserId: () => "u_1",
    });
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

  it("answers and records a route that sends before its first await, with and without a key", async () => {
    const app = Fastify();
    await app.register(idempotencyPlugin, {
      handler: new IdempotencyHandler(new MemoryStore()),
      getUserId: () => "u_1",
    });
    let runs = 0;
    // Without a key the route runs, and its onSend fires, before the plugin's decision has returned.
    app.post("/payments", { config: { idempotency: true } }, async (_request, reply) =>
      reply.code(201).send({ run: ++runs }),
    );
    const testApp = await inject(app);
    apps.push(testApp);
    const unkeyed = await testApp.request({});
    expect(unkeyed.status).toBe(201);
    expect(unkeyed.json()).toEqual({ run: 1 });
    const key = randomUUID();
    const first = await testApp.request({ key });
    const replay = await testApp.request({ key });
    expect(first.json()).toEqual({ run: 2 });
    expect(replay.body.equals(first.body)).toBe(true);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(runs).toBe(2);
  });

  it("frees the key of a hijacked reply instead of holding it", async () => {
    const app = Fastify();
    await app.register(idempotencyPlugin, {
      handler: new IdempotencyHandler(new MemoryStore()),
      getUserId: () => "u_1",
    });
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

// Issue 12, point 15: with the plugin registered before an auth plugin whose preHandler sets
// `request.user`, every request to the route answered 500 ("Cannot read properties of null").
describe("Fastify capture reads the user after every preHandler", () => {
  const apps: TestApp[] = [];
  afterEach(async () => void (await Promise.all(apps.splice(0).map((app) => app.close()))));

  it("protects a route whose user is set by a preHandler registered after the plugin", async () => {
    const app = Fastify();
    await app.register(idempotencyPlugin, {
      handler: new IdempotencyHandler(new MemoryStore()),
      getUserId: (request: WithUser) => request.user!.id,
    });
    app.addHook("preHandler", async function authenticate(request: WithUser) {
      request.user = { id: String(request.headers["x-user-id"]) };
    });
    let runs = 0;
    app.post("/payments", { config: { idempotency: { requireKey: true } } }, async (_request, reply) =>
      reply.code(201).send({ run: ++runs }),
    );
    const testApp = await inject(app);
    apps.push(testApp);
    const key = randomUUID();
    const first = await testApp.request({ key, user: "u_1" });
    const replay = await testApp.request({ key, user: "u_1" });
    const otherUser = await testApp.request({ key, user: "u_2" });
    const missingKey = await testApp.request({ user: "u_1" });
    expect([first.status, replay.status, otherUser.status, missingKey.status]).toEqual([201, 201, 201, 400]);
    expect([replay.context?.outcome, otherUser.json()]).toEqual(["replayed", { run: 2 }]);
  });

  it("answers a route declared before the plugin loaded with a setup error naming the fix, never unprotected", async () => {
    const app = Fastify();
    app.setErrorHandler((err: Error, _request, reply) => reply.code(500).send({ frameworkError: err.message }));
    void app.register(idempotencyPlugin, {
      handler: new IdempotencyHandler(new MemoryStore()),
      getUserId: () => "u_1",
    });
    let runs = 0;
    app.post("/payments", { config: { idempotency: true } }, async () => ({ run: ++runs }));
    const testApp = await inject(app);
    apps.push(testApp);
    const response = await testApp.request({ key: randomUUID() });
    expect(response.status).toBe(500);
    expect(response.json()).toEqual({
      frameworkError: expect.stringContaining("await app.register(idempotencyPlugin"),
    });
    expect(runs).toBe(0);
  });
});
