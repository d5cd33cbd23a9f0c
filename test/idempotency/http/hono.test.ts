// The HTTP conformance suite on Hono 4, through `app.request()`, plus Hono-only cases.
import { randomUUID } from "node:crypto";
import { Hono, type Context } from "hono";
import { streamText } from "hono/streaming";
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import type { IdempotencyContext } from "@/blocks/idempotency/http/context";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import {
  isPermanentRouteError,
  overHttp,
  routeResult,
  runHttpConformance,
  testResponse,
  toFetchRequest,
  type HttpDriver,
  type RouteReply,
  type TestApp,
} from "../support/http-conformance";
import type { RouteContext } from "@/blocks/idempotency/http/route-options";
import { idempotency, idempotent } from "@/blocks/idempotency/adapters/hono";

type Env = { Variables: { user: { id: string } } };

type Transport = (
  app: Hono<Env>,
  contexts: Map<string, () => IdempotencyContext | undefined>,
) => TestApp | Promise<TestApp>;

const honoDriver = (transport: Transport): HttpDriver => ({
  captureSeesThrownErrors: true,
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
      const options = {
        ...route.options,
        isPermanentError: isPermanentRouteError,
        ...(!route.defaultUserId && { getUserId: (c: Context<Env>) => c.get("user").id }),
      };
      const method = route.method ?? "POST";
      if (style === "wrapper") {
        app.on(
          method,
          route.path,
          idempotent(handler, {
            ...options,
            run: async (...args: unknown[]) => routeResult(await route.logic(args.at(-1) as RouteContext)),
          }),
        );
      } else {
        app.on(method, route.path, idempotency(handler, options), async (c) => send(c, await route.logic()));
      }
    }
    return transport(app, contexts);
  },
});

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

runHttpConformance(honoDriver(request));

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

// Issue 12, point 7: the body fingerprint left out uploaded file contents, invalid UTF-8 bytes and
// repeated form fields, so a different request under one key replayed the first one's answer.
describe("Hono fingerprints every byte of a body it does not parse as JSON", () => {
  async function start() {
    const app = new Hono();
    let runs = 0;
    app.post(
      "/uploads",
      idempotency(new IdempotencyHandler(new MemoryStore()), { getUserId: () => "u_1" }),
      async (c) => {
        const form = await c.req.parseBody({ all: true });
        return c.json({ run: ++runs, fields: Object.keys(form) }, 201);
      },
    );
    const send = async (key: string, body: NonNullable<RequestInit["body"]>, headers: Record<string, string> = {}) => {
      const response = await app.request("/uploads", {
        method: "POST",
        body,
        headers: { "idempotency-key": key, ...headers },
      });
      return { status: response.status, body: (await response.json()) as { run?: number; error?: { code: string } } };
    };
    return { send, runs: () => runs };
  }
  const form = (entries: Array<[string, string | Blob]>) => {
    const data = new FormData();
    for (const [name, value] of entries) data.append(name, value);
    return data;
  };

  it("answers a second upload with other file contents 409, and replays the same file sent again", async () => {
    const { send, runs } = await start();
    const key = randomUUID();
    expect((await send(key, form([["receipt", new File(["first scan"], "r.pdf")]]))).status).toBe(201);
    expect((await send(key, form([["receipt", new File(["other scan"], "r.pdf")]]))).body.error?.code).toBe(
      "KEY_REUSED_WITH_DIFFERENT_REQUEST",
    );
    // A new boundary, the same form: the same request.
    expect(await send(key, form([["receipt", new File(["first scan"], "r.pdf")]]))).toEqual({
      status: 201,
      body: { run: 1, fields: ["receipt"] },
    });
    expect(runs()).toBe(1);
  });

  it("answers repeated form fields that differ 409", async () => {
    const { send } = await start();
    const key = randomUUID();
    await send(key, "tag=a&tag=b", { "content-type": "application/x-www-form-urlencoded" });
    expect(
      (await send(key, "tag=c&tag=b", { "content-type": "application/x-www-form-urlencoded" })).body.error?.code,
    ).toBe("KEY_REUSED_WITH_DIFFERENT_REQUEST");
    const multipartKey = randomUUID();
    await send(
      multipartKey,
      form([
        ["tag", "a"],
        ["tag", "b"],
      ]),
    );
    expect(
      (
        await send(
          multipartKey,
          form([
            ["tag", "c"],
            ["tag", "b"],
          ]),
        )
      ).body.error?.code,
    ).toBe("KEY_REUSED_WITH_DIFFERENT_REQUEST");
  });

  it("answers two bodies with different invalid UTF-8 bytes 409", async () => {
    const { send } = await start();
    const key = randomUUID();
    await send(key, new Uint8Array([0x61, 0xff]), { "content-type": "text/plain" });
    expect((await send(key, new Uint8Array([0x61, 0xfe]), { "content-type": "text/plain" })).body.error?.code).toBe(
      "KEY_REUSED_WITH_DIFFERENT_REQUEST",
    );
  });
});

// A JSON body is read with Hono's own `c.req.text()`, the text its `c.req.json()` parses: the fingerprint
// is of what the route reads, and Hono's cache hands the route that text without a second read.
describe("Hono fingerprints a JSON body as its route reads it", () => {
  async function start() {
    const app = new Hono();
    const seen: unknown[] = [];
    app.post(
      "/orders",
      idempotency(new IdempotencyHandler(new MemoryStore()), { getUserId: () => "u_1" }),
      async (c) => {
        seen.push(await c.req.json());
        return c.json({ run: seen.length }, 201);
      },
    );
    const send = async (key: string, body: Uint8Array | string) => {
      const response = await app.request("/orders", {
        method: "POST",
        body,
        headers: { "idempotency-key": key, "content-type": "application/json" },
      });
      return { status: response.status, body: (await response.json()) as { run?: number; error?: { code: string } } };
    };
    return { send, seen };
  }
  const bytes = (text: string) => new TextEncoder().encode(text);

  it("takes a body with a byte-order mark as the route does, and a different member value as a different request", async () => {
    const { send, seen } = await start();
    const key = randomUUID();
    expect(await send(key, new Uint8Array([0xef, 0xbb, 0xbf, ...bytes('{"amount":1}')]))).toEqual({
      status: 201,
      body: { run: 1 },
    });
    expect(await send(key, '{ "amount": 1 }')).toEqual({ status: 201, body: { run: 1 } });
    expect((await send(key, '{"amount":2}')).body.error?.code).toBe("KEY_REUSED_WITH_DIFFERENT_REQUEST");
    expect(seen).toEqual([{ amount: 1 }]);
  });

  it("sees invalid UTF-8 in a JSON string as the U+FFFD the route reads, and refuses malformed JSON 400", async () => {
    const { send, seen } = await start();
    const key = randomUUID();
    await send(key, new Uint8Array([...bytes('{"note":"'), 0xff, ...bytes('"}')]));
    // Another invalid byte: the route would read the same text, so it is the same request.
    expect(await send(key, new Uint8Array([...bytes('{"note":"'), 0xfe, ...bytes('"}')]))).toEqual({
      status: 201,
      body: { run: 1 },
    });
    expect(seen).toEqual([{ note: "\uFFFD" }]);
    const malformed = await send(randomUUID(), '{"note":');
    expect([malformed.status, malformed.body.error?.code]).toEqual([400, "IDEMPOTENCY_PAYLOAD_INVALID"]);
  });
});

/**
 * The same suite served by @hono/node-server, whose lightweight Response the capture reads without
 * building a native one. Last in this file: `serve()` puts that Response in place of the global one.
 */
describe("served by @hono/node-server", () => {
  runHttpConformance(
    honoDriver((app, contexts) =>
      overHttp(serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server, contexts),
    ),
  );
});

// The capture reads what @hono/node-server kept of a Response made with plain headers, without
// turning them into a Headers object: the first response goes out as the route made it, and its
// replay carries the same allow-listed headers, lower-cased, whatever case the route used.
describe("Hono capture over @hono/node-server, a Response with plain headers", () => {
  it("replays its status, body and allow-listed headers, never its cookie, and keeps its first response intact", async () => {
    const app = new Hono();
    let runs = 0;
    app.post("/payments", idempotency(new IdempotencyHandler(new MemoryStore()), { getUserId: () => "u_1" }), () => {
      runs++;
      return new Response('{"id":"pay_1"}', {
        status: 201,
        headers: {
          "Content-Type": "application/json; charset=utf-8",
          Location: "/payments/pay_1",
          "Set-Cookie": "session=secret",
          "X-Debug": "1",
        },
      });
    });
    const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server;
    const testApp = await overHttp(server, new Map());
    try {
      const key = randomUUID();
      const first = await testApp.request({ key });
      const replay = await testApp.request({ key });
      expect(first.status).toBe(201);
      expect(first.headers.get("set-cookie")).toBe("session=secret");
      expect(first.headers.get("x-debug")).toBe("1");
      expect(replay.status).toBe(201);
      expect(replay.body.equals(first.body)).toBe(true);
      expect(replay.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(replay.headers.get("location")).toBe("/payments/pay_1");
      expect(replay.headers.get("set-cookie")).toBeNull();
      expect(replay.headers.get("x-debug")).toBeNull();
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(runs).toBe(1);
    } finally {
      await testApp.close();
    }
  });
});

// A replay has several headers (its content type, the marker): Hono's own handling of headers that
// middleware set before the route (`c.header()`) must still apply to it, in process and over a socket.
describe("Hono replays keep the headers middleware set with c.header()", () => {
  it.each(["app.request", "@hono/node-server"])("through %s", async (transport) => {
    const app = new Hono();
    let runs = 0;
    app.use(async (c, next) => {
      c.header("x-request-id", "req_1");
      await next();
    });
    app.post(
      "/payments",
      idempotent(new IdempotencyHandler(new MemoryStore()), {
        getUserId: () => "u_1",
        run: () => ({ status: 201, body: { id: `pay_${++runs}` }, headers: { location: "/payments/pay_1" } }),
      }),
    );
    const testApp =
      transport === "app.request"
        ? request(app as unknown as Hono<Env>, new Map())
        : await overHttp(serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server, new Map());
    try {
      const key = randomUUID();
      const first = await testApp.request({ key });
      const replay = await testApp.request({ key });
      for (const response of [first, replay]) {
        expect(response.status).toBe(201);
        expect(response.headers.get("x-request-id")).toBe("req_1");
        expect(response.headers.get("location")).toBe("/payments/pay_1");
        expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
      }
      expect(replay.body.equals(first.body)).toBe(true);
      expect(first.headers.get("idempotent-replayed")).toBeNull();
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(runs).toBe(1);
    } finally {
      await testApp.close();
    }
  });
});
