// The HTTP conformance suite on fetch-standard routes (Next.js, Bun, Deno), through Node 20's Request/Response, plus fetch-only cases.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { ANONYMOUS_USER_ID } from "@/blocks/idempotency/http/user-id";
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
import { deferred } from "@/blocks/idempotency/testing/deferred";
import { getIdempotencyContext, idempotent, withIdempotency } from "@/blocks/idempotency/adapters/fetch";

type FetchRoute = (request: Request, context: unknown) => Promise<Response>;

/** The app's own auth, as a fetch app has it: a function of the request. */
const userOf = (request: Request) => request.headers.get("x-user-id") ?? undefined;

const fetchDriver: HttpDriver = {
  captureSeesThrownErrors: true,
  frameworkUser: false,
  async start({ handler, style, routes }) {
    const app: RoutedFetchRoute[] = [];
    for (const route of routes) {
      const options = {
        ...route.options,
        ...(route.defaultUserId ? {} : { getUserId: userOf }),
        getOperation: (request: Request) => `${request.method} ${route.path}`,
        isPermanentError: isPermanentRouteError,
      } as Parameters<typeof withIdempotency>[1];
      const fetchRoute =
        style === "wrapper"
          ? idempotent(handler, {
              ...options,
              run: async (...args: unknown[]) => routeResult(await route.logic(args.at(-1) as RouteContext)),
            })
          : withIdempotency(handler, options, async () => toResponse(await route.logic()));
      app.push({ method: route.method ?? "POST", pattern: templatePattern(route.path), route: fetchRoute });
    }
    return serve(app);
  },
};

type RoutedFetchRoute = { method: string; pattern: RegExp; route: FetchRoute };

/** A route template ("/accounts/:id/withdrawals") as a pattern for the concrete path, as a file-system router matches it. */
function templatePattern(template: string): RegExp {
  return new RegExp(`^${template.replace(/:[^/]+/g, "[^/]+")}$`);
}

/** What an ordinary fetch route returns for a reply. */
function toResponse(reply: RouteReply): Response {
  const init = { status: reply.status ?? 200, headers: reply.headers ?? {} };
  if (reply.stream) {
    const chunks = reply.stream;
    const body = new ReadableStream({
      start: (controller) => (
        chunks.forEach((chunk) => controller.enqueue(new TextEncoder().encode(chunk))),
        controller.close()
      ),
    });
    return new Response(body, { ...init, headers: { ...init.headers, "transfer-encoding": "chunked" } });
  }
  if (typeof reply.body === "string")
    return new Response(reply.body, {
      ...init,
      headers: { "content-type": "text/plain; charset=utf-8", ...init.headers },
    });
  return Response.json(reply.body, init);
}

/** Routes by method and path, with the runtime's error handling (Next.js answers a thrown error with a 500). */
function serve(app: RoutedFetchRoute[]): TestApp {
  return {
    async request(request) {
      const { path, init } = toFetchRequest(request);
      const fetchRequest = new Request(`http://localhost${path}`, init);
      const { pathname } = new URL(fetchRequest.url);
      const matched = app.find((route) => route.method === fetchRequest.method && route.pattern.test(pathname));
      let response: Response;
      try {
        if (!matched)
          throw Object.assign(new Error(`no route for ${fetchRequest.method} ${pathname}`), { status: 404 });
        response = await matched.route(fetchRequest, undefined);
      } catch (err) {
        const { status, message } = err as { status?: number; message: string };
        response = Response.json({ frameworkError: message }, { status: status ?? 500 });
      }
      const body = Buffer.from(await response.arrayBuffer());
      return testResponse(response.status, response.headers, body, getIdempotencyContext(fetchRequest));
    },
    close: async () => {},
  };
}

runHttpConformance(fetchDriver);

describe("fetch routes", () => {
  const handler = () => new IdempotencyHandler(new MemoryStore());
  const getUserId = () => "u_1";

  it("passes the runtime's second argument (Next.js `{ params }`) to the route", async () => {
    type Params = { params: Promise<{ id: string }> };
    const POST = withIdempotency(
      handler(),
      { getUserId, getOperation: () => "POST /orders/[id]/refunds" },
      async (_request, { params }: Params) => {
        return Response.json({ refunded: (await params).id }, { status: 201 });
      },
    );
    const request = new Request("http://localhost/orders/o_1/refunds", {
      method: "POST",
      headers: { "idempotency-key": randomUUID() },
    });
    const response = await POST(request, { params: Promise.resolve({ id: "o_1" }) });
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ refunded: "o_1" });
    expect(getIdempotencyContext(request)).toMatchObject({
      operation: "POST /orders/[id]/refunds",
      outcome: "executed",
    });
  });

  it("refuses a route without getOperation: the concrete URL is never the operation", () => {
    const options = { getUserId } as unknown as Parameters<typeof withIdempotency>[1];
    expect(() => withIdempotency(handler(), options, () => new Response())).toThrow(/getOperation/);
  });

  it("replays a 204 without a body, and keeps the route's own body readable", async () => {
    let runs = 0;
    const POST = withIdempotency(handler(), { getUserId, getOperation: () => "POST /events" }, async (request) => {
      runs++;
      expect(await request.json()).toEqual({ type: "paid" });
      return new Response(null, { status: 204 });
    });
    const key = randomUUID();
    const send = () =>
      POST(
        new Request("http://localhost/events", {
          method: "POST",
          headers: { "idempotency-key": key, "content-type": "application/json" },
          body: '{"type":"paid"}',
        }),
        undefined,
      );
    expect((await send()).status).toBe(204);
    expect((await send()).status).toBe(204);
    expect(runs).toBe(1);
  });

  // Issue 12, points 4 and 6, for an app whose own `getUserId` finds no user.
  const POST = (options: { allowAnonymous?: boolean } = {}) => {
    let runs = 0;
    const route = withIdempotency(
      handler(),
      { ...options, getUserId: userOf, getOperation: () => "POST /payments" },
      () => Response.json({ run: ++runs }, { status: 201 }),
    );
    const send = (key: string, headers: Record<string, string>) => {
      const request = new Request("http://localhost/payments", {
        method: "POST",
        headers: { "idempotency-key": key, ...headers },
      });
      return { request, response: route(request, undefined) };
    };
    return { send, runs: () => runs };
  };

  it("refuses a request with an Authorization header whose getUserId finds no user, and runs nothing", async () => {
    const { send, runs } = POST({ allowAnonymous: true });
    await expect(send(randomUUID(), { authorization: "Bearer eyJhbGciOi.alice" }).response).rejects.toThrow(
      /getUserId/,
    );
    expect(runs()).toBe(0);
  });

  it('scopes a request without a user to the anonymous scope, apart from a real user whose id is "anonymous"', async () => {
    const { send, runs } = POST({ allowAnonymous: true });
    const key = randomUUID();
    const nobody = send(key, {});
    const named = send(key, { "x-user-id": "anonymous" });
    expect([(await nobody.response).status, (await named.response).status]).toEqual([201, 201]);
    expect([getIdempotencyContext(nobody.request)?.userId, getIdempotencyContext(named.request)?.userId]).toEqual([
      ANONYMOUS_USER_ID,
      "anonymous",
    ]);
    expect(runs()).toBe(2);
  });

  it("a waiting duplicate whose client went away (the request's signal aborted) stops waiting and answers 409 REQUEST_IN_PROGRESS", async () => {
    const entered = deferred();
    const finish = deferred();
    let runs = 0;
    const route = withIdempotency(
      handler(),
      { getUserId: userOf, getOperation: () => "POST /payments", waitMs: 60_000 },
      async () => {
        runs++;
        entered.resolve();
        await finish.promise;
        return Response.json({ run: runs }, { status: 201 });
      },
    );
    const key = randomUUID();
    const send = (signal?: AbortSignal) =>
      route(
        new Request("http://localhost/payments", {
          method: "POST",
          headers: { "idempotency-key": key, "x-user-id": "u_1" },
          signal: signal ?? null,
        }),
        undefined,
      );
    const first = send();
    await entered.promise;
    const client = new AbortController();
    const started = performance.now();
    const duplicate = send(client.signal);
    setTimeout(() => client.abort(), 50);
    const answer = await duplicate;
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(answer.status).toBe(409);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe("REQUEST_IN_PROGRESS");
    finish.resolve();
    expect((await first).status).toBe(201);
    expect(runs).toBe(1);
  });
});

describe("the route reads the body the fingerprint read (once, with no clone of the runtime's request)", () => {
  const getUserId = () => "u_1";
  /** A runtime's own Request class, as Next.js's NextRequest is: a private field and a getter of its own. */
  class RuntimeRequest extends Request {
    readonly #url: URL;
    constructor(input: string, init: RequestInit) {
      super(input, init);
      this.#url = new URL(input);
    }
    get nextUrl(): URL {
      return this.#url;
    }
    /** A method of its own that needs its `this` (a private field). */
    query(name: string): string | null {
      return this.#url.searchParams.get(name);
    }
  }
  const json = (key: string | undefined, body: string, type = "application/json") =>
    new RuntimeRequest("http://localhost/payments?via=test", {
      method: "POST",
      headers: { "content-type": type, ...(key === undefined ? {} : { "idempotency-key": key }) },
      body,
    });
  const protectedRoute = (route: (request: Request) => Promise<Response>) =>
    withIdempotency(
      new IdempotencyHandler(new MemoryStore()),
      { getUserId, getOperation: () => "POST /payments" },
      route,
    );

  it("hands the route a request of the runtime's class, its own getters working, and leaves the runtime's request as it was", async () => {
    const seen: unknown[] = [];
    const POST = protectedRoute(async (request) => {
      seen.push(
        request instanceof RuntimeRequest,
        (request as RuntimeRequest).nextUrl.search,
        request.headers.get("content-type"),
      );
      seen.push(request.method, request.url, request.signal.aborted, request.bodyUsed);
      return Response.json(await request.json(), { status: 201 });
    });
    const request = json(randomUUID(), '{"amount":100}');
    const ownKeys = Reflect.ownKeys(request);
    const response = await POST(request, undefined);
    expect(await response.json()).toEqual({ amount: 100 });
    expect(seen).toEqual([
      true,
      "?via=test",
      "application/json",
      "POST",
      "http://localhost/payments?via=test",
      false,
      false,
    ]);
    expect(Object.getPrototypeOf(request)).toBe(RuntimeRequest.prototype);
    expect(Reflect.ownKeys(request)).toEqual(ownKeys);
  });

  it("gives the same function for a method read twice, and runs the runtime's own methods on its request", async () => {
    const seen: unknown[] = [];
    const POST = protectedRoute(async (request) => {
      const runtime = request as RuntimeRequest;
      seen.push(
        request.json === request.json,
        request.clone === request.clone,
        runtime.query === runtime.query,
        runtime.query("via"),
      );
      return Response.json(await request.json(), { status: 201 });
    });
    expect((await POST(json(randomUUID(), '{"amount":100}'), undefined)).status).toBe(201);
    expect(seen).toEqual([true, true, true, "test"]);
  });

  it("lets the body be read once, as any Request's, and again through clone()", async () => {
    const reads: unknown[] = [];
    const POST = protectedRoute(async (request) => {
      const copy = request.clone();
      reads.push(await request.text());
      reads.push(request.bodyUsed);
      reads.push(await request.json().catch((err: Error) => err.message));
      reads.push(() => request.clone());
      reads.push(new TextDecoder().decode(await copy.arrayBuffer()));
      return new Response(null, { status: 204 });
    });
    expect((await POST(json(randomUUID(), '{"amount":100}'), undefined)).status).toBe(204);
    expect(reads.slice(0, 3)).toEqual(['{"amount":100}', true, expect.stringMatching(/Body is unusable/)]);
    expect(reads[3]).toThrow(/Body is unusable/);
    expect(reads[4]).toBe('{"amount":100}');
  });

  it("reads forms, bytes, blobs and the body's stream from the bytes read once", async () => {
    const reads: unknown[] = [];
    const POST = protectedRoute(async (request) => {
      const type = request.headers.get("x-read");
      if (type === "form") reads.push([...(await request.formData())]);
      if (type === "blob") reads.push(await (await request.blob()).text());
      if (type === "stream") reads.push(await new Response(request.body).text(), request.bodyUsed);
      return new Response(null, { status: 204 });
    });
    const send = (read: string, body: string, type: string) =>
      POST(
        new Request("http://localhost/payments", {
          method: "POST",
          headers: { "idempotency-key": randomUUID(), "content-type": type, "x-read": read },
          body,
        }),
        undefined,
      );
    await send("form", "tag=a&tag=b", "application/x-www-form-urlencoded");
    await send("blob", "plain words", "text/plain");
    await send("stream", '{"amount":7}', "application/json");
    expect(reads).toEqual([
      [
        ["tag", "a"],
        ["tag", "b"],
      ],
      "plain words",
      '{"amount":7}',
      true,
    ]);
  });

  it("reads a JSON body as the runtime's text() does: a byte-order mark dropped, invalid UTF-8 as U+FFFD in json(), text() and bytes", async () => {
    const reads: unknown[] = [];
    const POST = protectedRoute(async (request) => {
      const read = request.headers.get("x-read");
      if (read === "json") reads.push(await request.json());
      if (read === "text") reads.push(await request.text());
      if (read === "bytes") reads.push(new TextDecoder().decode(await request.arrayBuffer()));
      return new Response(null, { status: 204 });
    });
    const encode = (text: string) => new TextEncoder().encode(text);
    const send = (read: string, body: Uint8Array) =>
      POST(
        new Request("http://localhost/payments", {
          method: "POST",
          headers: { "idempotency-key": randomUUID(), "content-type": "application/json", "x-read": read },
          body,
        }),
        undefined,
      );
    const invalid = new Uint8Array([...encode('{"note":"'), 0xff, ...encode('"}')]);
    await send("json", new Uint8Array([0xef, 0xbb, 0xbf, ...encode('{"amount":1}')]));
    await send("json", invalid);
    await send("text", invalid);
    await send("bytes", invalid);
    expect(reads).toEqual([{ amount: 1 }, { note: "\uFFFD" }, '{"note":"\uFFFD"}', '{"note":"\uFFFD"}']);
  });

  it("hashes the payload before the route runs: a route that changes what json() gave it still gets its retry replayed", async () => {
    let runs = 0;
    const POST = protectedRoute(async (request) => {
      runs++;
      const body = (await request.json()) as { amount: number };
      body.amount = 0;
      return Response.json(body, { status: 201 });
    });
    const key = randomUUID();
    await POST(json(key, '{"amount":100}'), undefined);
    const retry = await POST(json(key, '{"amount":100}'), undefined);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(runs).toBe(1);
  });

  it("gives a request without a key, whose body nothing read, to the route as it is", async () => {
    let seen: Request | undefined;
    const POST = protectedRoute(async (request) => {
      seen = request;
      return Response.json(await request.json());
    });
    const request = json(undefined, '{"amount":1}');
    expect(await (await POST(request, undefined)).json()).toEqual({ amount: 1 });
    expect(seen).toBe(request);
  });
});
