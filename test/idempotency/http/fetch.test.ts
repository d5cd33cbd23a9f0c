// The HTTP conformance suite on fetch-standard routes (Next.js, Bun, Deno), through Node 20's Request/Response, plus fetch-only cases.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { MemoryStore } from "@/blocks/idempotency/stores/memory-store";
import { isPermanentRouteError, routeResult, runHttpConformance, testResponse, toFetchRequest, type HttpDriver, type RouteReply, type TestApp } from "../support/http-conformance";
import { getIdempotencyContext, idempotent, withIdempotency } from "@/blocks/idempotency/adapters/fetch";

type FetchRoute = (request: Request, context: unknown) => Promise<Response>;

/** The app's own auth, as a fetch app has it: a function of the request. */
const userOf = (request: Request) => request.headers.get("x-user-id") ?? undefined;

const fetchDriver: HttpDriver = {
  captureSeesThrownErrors: true,
  frameworkUser: false,
  async start({ handler, style, routes }) {
    const app = new Map<string, FetchRoute>();
    for (const route of routes) {
      const options = {
        ...route.options,
        ...(route.defaultUserId ? {} : { getUserId: (request: Request) => userOf(request)! }),
        getOperation: (request: Request) => `${request.method} ${route.path}`,
        isPermanentError: isPermanentRouteError,
      } as Parameters<typeof withIdempotency>[1];
      if (style === "wrapper") {
        app.set(route.path, idempotent(handler, { ...options, run: async () => routeResult(await route.logic()) }));
      } else {
        app.set(route.path, withIdempotency(handler, options, async () => toResponse(await route.logic())));
      }
    }
    return serve(app);
  },
};

/** What an ordinary fetch route returns for a reply. */
function toResponse(reply: RouteReply): Response {
  const init = { status: reply.status ?? 200, headers: reply.headers ?? {} };
  if (reply.stream) {
    const chunks = reply.stream;
    const body = new ReadableStream({ start: (controller) => (chunks.forEach((chunk) => controller.enqueue(new TextEncoder().encode(chunk))), controller.close()) });
    return new Response(body, { ...init, headers: { ...init.headers, "transfer-encoding": "chunked" } });
  }
  if (typeof reply.body === "string") return new Response(reply.body, { ...init, headers: { "content-type": "text/plain; charset=utf-8", ...init.headers } });
  return Response.json(reply.body, init);
}

/** Routes by path, with the runtime's error handling (Next.js answers a thrown error with a 500). */
function serve(app: Map<string, FetchRoute>): TestApp {
  return {
    async request(request) {
      const { path, init } = toFetchRequest(request);
      const fetchRequest = new Request(`http://localhost${path}`, init);
      let response: Response;
      try {
        response = await app.get(path)!(fetchRequest, undefined);
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
    const POST = withIdempotency(handler(), { getUserId, getOperation: () => "POST /orders/[id]/refunds" }, async (_request, { params }: Params) => {
      return Response.json({ refunded: (await params).id }, { status: 201 });
    });
    const request = new Request("http://localhost/orders/o_1/refunds", { method: "POST", headers: { "idempotency-key": randomUUID() } });
    const response = await POST(request, { params: Promise.resolve({ id: "o_1" }) });
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ refunded: "o_1" });
    expect(getIdempotencyContext(request)).toMatchObject({ operation: "POST /orders/[id]/refunds", outcome: "executed" });
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
    const send = () => POST(new Request("http://localhost/events", { method: "POST", headers: { "idempotency-key": key, "content-type": "application/json" }, body: '{"type":"paid"}' }), undefined);
    expect((await send()).status).toBe(204);
    expect((await send()).status).toBe(204);
    expect(runs).toBe(1);
  });
});
