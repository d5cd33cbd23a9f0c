// The contract between the HTTP conformance suite and a framework's driver, with helpers drivers share.
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { IdempotencyHandler } from "@/blocks/idempotency/handler";
import type { IdempotencyContext } from "@/blocks/idempotency/http/context";
import type { RouteResult } from "@/blocks/idempotency/http/http-response";
import type { IdempotencyRouteOptions, RouteContext } from "@/blocks/idempotency/http/route-options";

export type Style = "wrapper" | "capture";

/** What a test route answers. An object body goes out as JSON, a string as text; `stream` pipes chunks instead. */
export type RouteReply = { status?: number; body?: unknown; headers?: Record<string, string>; stream?: string[] };

/** Route options every framework takes as they are (the driver adds `getUserId` and `isPermanentError`). */
export type NeutralRouteOptions = Omit<IdempotencyRouteOptions<unknown>, "getUserId" | "getOperation" | "getBody">;

export type Method = "POST" | "PUT" | "PATCH" | "DELETE";

export type TestRoute = {
  /** The framework's path template, e.g. "/accounts/:id/withdrawals" (the same syntax in all three). */
  path: string;
  /** @default "POST" */
  method?: Method;
  /**
   * The route's logic, with its side effect: it is what must run exactly once. Wrapper style hands
   * it `run`'s context (with `step`); capture style has none to hand.
   */
  logic: (ctx?: RouteContext) => Promise<RouteReply> | RouteReply;
  options: NeutralRouteOptions;
  /** Leave `getUserId` out, so the adapter's default (the framework's user) applies. */
  defaultUserId?: boolean;
};

/**
 * Builds an app for one test: an auth step that sets the framework's user (`req.user`,
 * `request.user`, `c.set("user")`) to `{ id: <x-user-id header> }` (and nothing for an
 * Authorization header: that is a token the default lookup cannot read), one route per `TestRoute`
 * in the given style, and an error handler answering `err.status ?? err.statusCode ?? 500` with
 * `{ frameworkError: err.message }`. Rejects when the adapter refuses the routes.
 */
export type HttpDriver = {
  /** True when the capture style sees an error the route throws (Hono's `c.error`, Fastify's onError); Express's does not. */
  captureSeesThrownErrors: boolean;
  /** `false` for an adapter with no framework user (fetch): there `getUserId` is always required. */
  frameworkUser?: false;
  start(setup: { handler: IdempotencyHandler; style: Style; routes: TestRoute[] }): Promise<TestApp>;
};

export type TestApp = {
  request(request: TestRequest): Promise<TestResponse>;
  close(): Promise<void>;
};

export type TestRequest = {
  /** @default "POST" */
  method?: Method;
  /** Path and query, e.g. "/accounts/A/withdrawals?to=bob". @default "/payments" */
  path?: string;
  key?: string;
  user?: string;
  body?: unknown;
  rawJson?: string;
  headers?: Record<string, string>;
};

export type TestResponse = {
  status: number;
  headers: Headers;
  body: Buffer;
  /** The request's `IdempotencyContext` as the app saw it, read after the response. */
  context: IdempotencyContext | undefined;
  json(): unknown;
};

/** The fetch-style request a driver sends for a `TestRequest`; `testId` lets the app report the request's context. */
export function toFetchRequest(request: TestRequest): {
  path: string;
  testId: string;
  init: { method: string; headers: Record<string, string>; body: string; redirect: "manual" };
} {
  const testId = randomUUID();
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-test-id": testId,
    ...request.headers,
  };
  if (request.key !== undefined) headers["idempotency-key"] = request.key;
  if (request.user !== undefined) headers["x-user-id"] = request.user;
  const body = request.rawJson ?? JSON.stringify(request.body ?? { amount: 100, currency: "EUR" });
  return {
    path: request.path ?? "/payments",
    testId,
    init: { method: request.method ?? "POST", headers, body, redirect: "manual" },
  };
}

export function testResponse(
  status: number,
  headers: Headers,
  body: Buffer,
  context: IdempotencyContext | undefined,
): TestResponse {
  return { status, headers, body, context, json: () => JSON.parse(body.toString("utf8")) };
}

/** A TestApp over a Node server the driver started: real HTTP requests on loopback; `contexts` by test id. */
export async function overHttp(
  server: Server,
  contexts: Map<string, () => IdempotencyContext | undefined>,
): Promise<TestApp> {
  if (!server.listening) await once(server, "listening");
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    async request(request) {
      const { path, testId, init } = toFetchRequest(request);
      const response = await fetch(base + path, init);
      const body = Buffer.from(await response.arrayBuffer());
      return testResponse(response.status, response.headers, body, contexts.get(testId)?.());
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

/** A wrapper-style route returns what a capture-style route sends. */
export function routeResult(reply: RouteReply): RouteResult {
  const { stream, ...result } = reply;
  if (stream) throw new Error("A wrapper-style route returns a body; it cannot stream.");
  return result;
}

/** An error the logic throws; `permanent` is what `isPermanentRouteError` checks. */
export class RouteError extends Error {
  readonly status: number;
  readonly permanent: boolean;

  constructor(status: number, message: string, permanent = false) {
    super(message);
    this.status = status;
    this.permanent = permanent;
  }
}

/** The `isPermanentError` of every test route (in capture style the framework turns thrown errors into responses first). */
export function isPermanentRouteError(err: unknown): boolean {
  return err instanceof RouteError && err.permanent;
}
