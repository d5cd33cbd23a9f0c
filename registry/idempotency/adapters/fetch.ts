// Fetch-standard adapter (Next.js route handlers, Bun.serve, Deno.serve, Remix actions): `withIdempotency()` and `idempotent()`.
import type { IdempotencyHandler } from "../handler";
import type { IdempotencyContext } from "../http/context";
import {
  bodyBytes,
  toHttpResponse,
  wireBody,
  type HttpHeaders,
  type HttpResponse,
  type RouteResult,
  type Uncaptured,
} from "../http/http-response";
import { IDEMPOTENCY_KEY_HEADER } from "../http/key-header";
import { requestTarget } from "../http/request-fingerprint";
import { protectRoute, type ProtectedRequest } from "../http/protect";
import type { TransactionContext } from "../operation-context";
import type {
  CanTransact,
  FrameworkDefaults,
  GetOperation,
  IdempotencyRouteOptions,
  RouteContext,
  WrapperRun,
} from "../http/route-options";
import { decodeUtf8 } from "../http/stored-response";
import { IdempotencySetupError } from "../http/user-id";
import { warnOnce } from "../http/warn-once";
import { readBody, withReadBody, type ReadBody } from "./read-body-fetch";

/**
 * A fetch handler knows neither the user nor its route's path template, so both are required:
 * `getOperation` names the route (`"POST /api/orders/[id]/refunds"`), never its concrete URL.
 */
export type FetchRouteOptions = Omit<IdempotencyRouteOptions<Request>, "getUserId"> & {
  /** The authenticated user's id, or nothing for a request without one (then the anonymous scope, unless it carries credentials). */
  getUserId: (request: Request) => string | null | undefined | Promise<string | null | undefined>;
  getOperation: GetOperation<Request>;
};

/**
 * A route as Next.js, Bun and Deno call it, with the idempotency context last: `context` is what the
 * runtime passes second (Next.js: `{ params }`); `ctx.signal` aborts if another execution takes the
 * key over, and with `transaction: true`, `ctx.tx` is the transaction its writes must go through.
 */
export type FetchRoute<Context, Ctx = RouteContext> = (
  request: Request,
  context: Context,
  ctx: Ctx,
) => Response | Promise<Response>;

/** `run(request, context, ctx)` is the route's logic; side effects belong in it. */
export type FetchIdempotentOptions<Context, Tx = unknown> = FetchRouteOptions &
  WrapperRun<[request: Request, context: Context], Tx>;

/** `transaction: true`, accepted only with a handler whose store can open a transaction of your client. */
type TransactionOption<Tx> = { transaction: CanTransact<Tx> extends true ? true : never };

const contexts = new WeakMap<Request, IdempotencyContext>();
/** What `getUserId` returned for each request, read by the shared flow as the framework's user. */
const userIds = new WeakMap<Request, string | null | undefined>();

/**
 * The idempotency decision for a request a protected route has seen (fetch requests have no
 * place of their own for it), e.g. for an access log.
 *
 * @example
 * const response = await POST(request, context);
 * logger.info({ idempotency: getIdempotencyContext(request) }, "payment request");
 */
export function getIdempotencyContext(request: Request): IdempotencyContext | undefined {
  return contexts.get(request);
}

/**
 * What identifies a request, read in one place: the method and route name scope the key; the
 * concrete path and query are what the request targets (for the fingerprint).
 */
const fetchDefaults: FrameworkDefaults<Request> = {
  userIdOf: (request) => userIds.get(request),
  operationOf: (request) => {
    throw new IdempotencySetupError(
      `idempotency: ${request.method} route has no \`getOperation\`; a fetch route cannot see its path template.`,
    );
  },
  bodyOf: parsedBody,
};

/**
 * Wraps a fetch route that returns a `Response`: the first response is recorded byte for byte
 * (status, body, replayable headers) and every retry with the same key gets it again, without
 * running the route. A response marked as a stream (`text/event-stream`, `Transfer-Encoding: chunked`)
 * goes out unrecorded and frees the key; any other body is read to its end. The route gets the
 * idempotency context third, after the runtime's own (`ctx.signal`; `ctx.tx` with `transaction: true`).
 *
 * @example
 * // app/api/orders/[id]/refunds/route.ts (Next.js App Router)
 * export const POST = withIdempotency(handler, {
 *   getUserId: async () => (await auth()).userId,
 *   getOperation: () => "POST /api/orders/[id]/refunds",
 *   requireKey: true,
 * }, async (request, { params }: { params: Promise<{ id: string }> }, ctx) => {
 *   return Response.json(await refund((await params).id, await request.json(), { signal: ctx.signal }), { status: 201 });
 * });
 *
 * // Bun.serve({ fetch: withIdempotency(handler, options, route) }) and Deno.serve(...) take it the same way.
 */
export function withIdempotency<Context = unknown, Tx = unknown>(
  handler: IdempotencyHandler<Tx>,
  options: FetchRouteOptions & TransactionOption<Tx>,
  route: FetchRoute<Context, TransactionContext<Tx>>,
): (request: Request, context: Context) => Promise<Response>;
export function withIdempotency<Context = unknown>(
  handler: IdempotencyHandler<unknown>,
  options: FetchRouteOptions & { transaction?: false | undefined },
  route: FetchRoute<Context>,
): (request: Request, context: Context) => Promise<Response>;
export function withIdempotency<Context>(
  handler: IdempotencyHandler<unknown>,
  options: FetchRouteOptions & { transaction?: boolean | undefined },
  route: FetchRoute<Context, never>,
): (request: Request, context: Context) => Promise<Response> {
  const protect = protectFetchRoute(handler, options);
  // Its context is a TransactionContext exactly when `transaction: true` (the overloads keep the two together).
  const routeOf = route as FetchRoute<Context>;
  return async function idempotentFetchRoute(request, context) {
    let original: Response | undefined;
    const verdict = await protect(
      request,
      requestOf(request, async (ctx) => {
        original = await routeOf(routeRequest(request), context, ctx);
        return readResponse(original);
      }),
    );
    if (verdict.kind === "error") throw verdict.error;
    // A stream goes out as the route's own response.
    if (verdict.kind === "uncaptured") return original!;
    // The route's own answer: its status and headers as it made them; only its body, read to record it, is new.
    if (verdict.kind === "answered")
      return responseOf(verdict.response.body, ownInit(original!), verdict.response.text);
    return toResponse(verdict.response);
  };
}

/**
 * Wrapper style: `run` returns `{ status?, body, headers? }`, serialized once; retries replay those bytes.
 *
 * @example
 * export const POST = idempotent(handler, {
 *   getUserId: async () => (await auth()).userId,
 *   getOperation: () => "POST /api/payments",
 *   isPermanentError: (err) => err instanceof CardDeclinedError,
 *   run: async (request) => ({ status: 201, body: await charge(await request.json()) }),
 * });
 */
export function idempotent<Context = unknown, Tx = unknown>(
  handler: IdempotencyHandler<Tx>,
  options: FetchIdempotentOptions<Context, Tx>,
): (request: Request, context: Context) => Promise<Response> {
  const { run, ...routeOptions } = options as FetchRouteOptions & {
    transaction?: boolean;
    run: (request: Request, context: Context, ctx: RouteContext) => RouteResult | Promise<RouteResult>;
  };
  const protect = protectFetchRoute(handler, routeOptions);
  return async function idempotentFetchRoute(request, context) {
    const verdict = await protect(
      request,
      requestOf(request, async (ctx) => toHttpResponse(await run(routeRequest(request), context, ctx))),
    );
    if (verdict.kind === "error") throw verdict.error;
    // A wrapper's route returns its result, so it never streams.
    if (verdict.kind === "uncaptured") throw new TypeError("idempotency: a wrapper-style route cannot stream.");
    return toResponse(verdict.response);
  };
}

function protectFetchRoute(
  handler: IdempotencyHandler<unknown>,
  options: FetchRouteOptions & { transaction?: boolean | undefined },
) {
  // Checked at run time too: a JavaScript caller, or a cast, gets the fix instead of a shared anonymous scope.
  if (typeof options.getUserId !== "function" || typeof options.getOperation !== "function") {
    throw new TypeError(
      "idempotency: a fetch route needs `getUserId` and `getOperation` (there is no framework user or route template to read them from).",
    );
  }
  const { getUserId, ...rest } = options;
  // The id is read before the shared flow and handed to it as the "framework's user", so that a
  // request without one gets the anonymous scope, and one with an Authorization header but no id
  // is refused (a 500) instead: the lookup missed a user that is there, and the shared scope would
  // let signed-in users replay each other's responses. `getUserId` itself is required above.
  const protect = protectRoute(handler, { ...rest, allowAnonymous: true }, fetchDefaults);
  return async function protectFetch(request: Request, protectedRequest: ProtectedRequest) {
    const id = await getUserId(request);
    if ((id === undefined || id === null || id === "") && !options.allowAnonymous && !protectedRequest.hasCredentials) {
      warnOnce(
        "idempotency: `getUserId` returned no user id, so the key is scoped to the shared anonymous user. Return the user's id (or pass `allowAnonymous: true`).",
      );
    }
    userIds.set(request, id);
    return protect(request, protectedRequest);
  };
}

/** Built as one literal (no spread into a second object): this runs on every request. */
function requestOf(request: Request, produce: ProtectedRequest["produce"]): ProtectedRequest {
  return {
    produce,
    method: request.method,
    url: requestTarget(request.url),
    keyHeader: request.headers.get(IDEMPOTENCY_KEY_HEADER),
    hasCredentials: request.headers.has("authorization"),
    setContext: (context) => contexts.set(request, context),
    signal: () => request.signal,
  };
}

/** Reads the route's response into bytes; the client gets a copy built from them, as a retry later does. */
async function readResponse(response: Response): Promise<HttpResponse | Uncaptured> {
  // A response marked as a stream may never end, so reading it to record it could hang the request.
  if (
    response.headers.get("transfer-encoding") === "chunked" ||
    response.headers.get("content-type")?.startsWith("text/event-stream")
  ) {
    return { uncaptured: "the route returned a streaming response" };
  }
  const body = await readBytes(response);
  // One pass: the iterator joins a repeated header's values, but gives each Set-Cookie apart (kept as a list).
  const headers: HttpHeaders = {};
  let cookies = false;
  for (const [name, value] of response.headers) {
    if (name === "set-cookie") cookies = true;
    else headers[name] = value;
  }
  if (cookies) headers["set-cookie"] = response.headers.getSetCookie();
  // Decoded once, here: the stored copy and the client's copy both take this text instead of checking the bytes again.
  const text = decodeUtf8(body);
  const { status } = response;
  return text === undefined ? { status, headers, body } : { status, headers, body, text };
}

/**
 * The body's bytes, read from its stream and copied into one buffer as `arrayBuffer()` does, without
 * its bookkeeping: 6 µs of the 12 that `arrayBuffer()` takes on a `Response.json(...)`.
 */
async function readBytes(response: Response): Promise<Buffer> {
  if (response.bodyUsed) throw new TypeError("Body is unusable: the route's response was read already.");
  if (response.body === null) return Buffer.alloc(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    const chunk: unknown = read.value;
    if (!(chunk instanceof Uint8Array)) throw new TypeError("Received non-Uint8Array chunk in the route's response.");
    chunks.push(chunk);
    size += chunk.byteLength;
  }
  return Buffer.concat(chunks, size);
}

/** The status, status text and headers of the route's own response, for the copy of it that goes out. */
function ownInit(response: Response): ResponseInit & { status: number } {
  // A status text only when the route set one: "" is what a Response without one has, and skips its check.
  const { status, statusText, headers } = response;
  return statusText === "" ? { status, headers } : { status, statusText, headers };
}

function toResponse(response: HttpResponse): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (typeof value === "string") headers.append(name, value);
    else for (const item of value) headers.append(name, item);
  }
  return responseOf(response.body, { status: response.status, headers }, response.text);
}

function responseOf(body: Buffer, init: ResponseInit & { status: number }, bodyText?: string): Response {
  // A Response may not carry a body with 204, 205 or 304.
  if (body.length === 0 || init.status === 204 || init.status === 205 || init.status === 304)
    return new Response(null, init);
  // UTF-8 bytes as their text: Node 20 builds a Response from a string for about two thirds of the CPU
  // it takes for the same bytes (26 against 36 µs, alternating rounds). Other bytes go as a view, not a copy.
  const text = wireBody(body, bodyText);
  return new Response(typeof text === "string" ? text : bodyBytes(text), init);
}

/** Each request body the fingerprint read, so the route reads it again instead of a spent body. */
const bodies = new WeakMap<Request, ReadBody>();

/** The runtime's own request when nothing read its body (no key, or your `getFingerprint`), else a view of it with the body read. */
function routeRequest(request: Request): Request {
  const body = bodies.get(request);
  return body === undefined ? request : withReadBody(request, body);
}

/** JSON, form or text, read once: the route reads the same bytes (see `withReadBody`). */
async function parsedBody(request: Request): Promise<unknown> {
  const body = await readBody(request);
  bodies.set(request, body);
  return body.parsed;
}
