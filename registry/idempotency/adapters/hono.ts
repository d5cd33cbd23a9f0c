// Hono 4 adapter: `idempotent()` wraps a handler that returns its result; `idempotency()` middleware captures an ordinary one.
import type { Context, MiddlewareHandler, Next } from "hono";
import type { IdempotencyHandler } from "../handler";
import type { IdempotencyContext } from "../http/context";
import {
  bodyBytes,
  toHttpResponse,
  wireBody,
  type HttpResponse,
  type RouteResult,
  type Uncaptured,
} from "../http/http-response";
import { IDEMPOTENCY_KEY_HEADER } from "../http/key-header";
import { requestTarget } from "../http/request-fingerprint";
import { protectRoute, type ProtectedRequest } from "../http/protect";
import type {
  FrameworkDefaults,
  IdempotencyRouteOptions,
  RouteContext,
  WrapperRouteOptions,
  WrapperRun,
} from "../http/route-options";
import { parsedBody } from "./read-body-hono";
import { routeTemplateOf, userIdOf } from "./route-and-user-hono";

declare module "hono" {
  interface ContextVariableMap {
    /** Set on every request a protected route sees. */
    idempotency: IdempotencyContext;
  }
}

export type HonoRouteOptions = IdempotencyRouteOptions<Context>;

/** `run(c, ctx)` is the route's logic; side effects belong in it. `ctx.signal` aborts if another execution takes the key over; `ctx.tx` is the transaction with `transaction: true`. */
export type HonoIdempotentOptions<Tx = unknown> = WrapperRouteOptions<Context> & WrapperRun<[c: Context], Tx>;

const honoDefaults: FrameworkDefaults<Context> = {
  userIdOf,
  operationOf: (c) => `${c.req.method} ${routeTemplateOf(c)}`,
  bodyOf: parsedBody,
};

/**
 * Wrapper style: a handler that runs `run` once per key and replays its result to retries.
 *
 * @example
 * app.post("/payments", idempotent(handler, {
 *   getUserId: (c) => c.get("user").id,
 *   run: async (c) => ({ status: 201, body: await charge(await c.req.json()) }),
 * }));
 */
export function idempotent<Tx = unknown>(handler: IdempotencyHandler<Tx>, options: HonoIdempotentOptions<Tx>) {
  const { run, ...routeOptions } = options as WrapperRouteOptions<Context> & { run: WrapperRequest["run"] };
  const protect = protectRoute(handler, routeOptions, honoDefaults);
  return async function idempotentRoute(c: Context): Promise<Response> {
    const verdict = await protect(c, new WrapperRequest(c, run));
    if (verdict.kind === "error") throw verdict.error;
    return verdict.kind === "uncaptured" ? c.res : send(c, verdict.response);
  };
}

/**
 * Capture style: middleware before an ordinary handler. It records the response the handler
 * returns and replays it; error responses and streams (`streamText`, `streamSSE`) are never recorded.
 *
 * @example
 * app.post("/payments", idempotency(handler, { getUserId: (c) => c.get("user").id }), async (c) => {
 *   return c.json(await charge(await c.req.json()), 201);
 * });
 */
export function idempotency(handler: IdempotencyHandler<unknown>, options: HonoRouteOptions = {}): MiddlewareHandler {
  const protect = protectRoute(handler, options, honoDefaults, "Hono's idempotency() middleware");
  return async function idempotencyMiddleware(c, next) {
    const verdict = await protect(c, new CaptureRequest(c, next));
    // The handler's own response is `c.res` already (answered, or a stream that went out as it is).
    if (verdict.kind === "error") throw verdict.error;
    if (verdict.kind === "replayed" || verdict.kind === "refused") return send(c, verdict.response);
  };
}

/**
 * What `protect` reads of one request: one object whose methods live on its class, rather than a
 * literal with closures made for every request.
 */
class HonoRequestView {
  readonly c: Context;
  readonly method: string;
  readonly url: string;
  readonly keyHeader: string | undefined;
  readonly hasCredentials: boolean;
  constructor(c: Context) {
    this.c = c;
    this.method = c.req.method;
    this.url = requestTarget(c.req.url);
    this.keyHeader = c.req.header(IDEMPOTENCY_KEY_HEADER);
    this.hasCredentials = c.req.header("authorization") !== undefined;
  }
  setContext(context: IdempotencyContext): void {
    this.c.set("idempotency", context);
  }
  signal(): AbortSignal {
    return this.c.req.raw.signal;
  }
}

/** A wrapper-style request: the handler's `run`, its result serialized once. */
class WrapperRequest extends HonoRequestView implements ProtectedRequest {
  readonly run: (c: Context, ctx: RouteContext) => RouteResult | Promise<RouteResult>;
  constructor(c: Context, run: WrapperRequest["run"]) {
    super(c);
    this.run = run;
  }
  async produce(ctx: RouteContext): Promise<HttpResponse> {
    return toHttpResponse(await this.run(this.c, ctx));
  }
}

/** A capture-style request: the next handler runs, and its response (or the error it threw, `c.error`) is read. */
class CaptureRequest extends HonoRequestView implements ProtectedRequest {
  readonly next: Next;
  constructor(c: Context, next: Next) {
    super(c);
    this.next = next;
  }
  async produce(): Promise<HttpResponse | Uncaptured> {
    await this.next();
    return captureResponse(this.c);
  }
  thrownError(): unknown {
    return this.c.error;
  }
}

/** Reads the handler's response into bytes; when that spends its body, puts an identical one back for the client. */
async function captureResponse(c: Context): Promise<HttpResponse | Uncaptured> {
  const res = c.res;
  const kept = nodeServerKept(res);
  // Read from what @hono/node-server kept when it can: `res.headers` would turn its plain headers
  // into a Headers object, and the response would then go out through its slower path.
  const headers = (kept && plainHeaders(kept[2])) ?? headersOf(res);
  // Hono's streaming helpers declare chunked transfer (SSE also its content type); reading such a
  // body could wait forever. A plain `stream()` declares nothing, so it is read to its end and recorded.
  const contentType = headers["content-type"];
  if (
    headers["transfer-encoding"] === "chunked" ||
    (typeof contentType === "string" && contentType.startsWith("text/event-stream"))
  ) {
    return { uncaptured: "the route returned a streaming response" };
  }
  const keptBody = kept && keptBytes(kept[1]);
  if (keptBody !== undefined) return { status: res.status, headers, body: keptBody };
  const body = Buffer.from(await res.arrayBuffer());
  // An init of plain fields, not `res` itself: given a Response as init, @hono/node-server builds a
  // second full Response object for the copy, which costs more than the rest of the request.
  const copy = new Response(bodyBytes(body), { status: res.status, statusText: res.statusText, headers: res.headers });
  // Cleared first: replacing a set `c.res` makes Hono copy the new one (reading its `body` builds a
  // native Response and a stream) to merge headers that the copy already has, all of them.
  c.res = undefined;
  c.res = copy;
  return { status: res.status, headers, body };
}

/** The response's headers read through the Fetch API: lower-case names, Set-Cookie as its list. */
function headersOf(res: Response): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = Object.fromEntries(res.headers);
  const cookies = res.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  return headers;
}

/** The symbol under which @hono/node-server's Response keeps what it was made with; found on first sight. */
let nodeServerCache: symbol | undefined;

/**
 * What a Response that @hono/node-server made, and nothing has read yet, keeps under a private
 * symbol: `[status, body, headers]`, written out as they are. Reading them there rather than through
 * the Fetch API (`res.arrayBuffer()` builds a native Response and reads it as a stream; `res.headers`
 * builds a Headers object) saves the largest costs of capturing, and `c.res` goes out unchanged.
 * Undefined for any other Response, or a version that keeps it otherwise: then the public path reads it.
 */
function nodeServerKept(res: Response): readonly unknown[] | undefined {
  nodeServerCache ??= Object.getOwnPropertySymbols(res).find((symbol) => symbol.description === "cache");
  const kept: unknown = nodeServerCache && (res as unknown as Record<symbol, unknown>)[nodeServerCache];
  return Array.isArray(kept) && kept[0] === res.status ? kept : undefined;
}

/** The kept body as bytes: a string or bytes as they go out, null as none; undefined for a stream or Blob. */
function keptBytes(body: unknown): Buffer | undefined {
  if (typeof body === "string") return Buffer.from(body, "utf8");
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return body === null ? Buffer.alloc(0) : undefined;
}

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// A value the Fetch API keeps as it is and Node can write: bytes of text, no whitespace at either end.
const PLAIN_VALUE = /^(?:[\x21-\x7e\x80-\xff](?:[\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?$/;

/**
 * Kept headers given as a plain object (what `c.json()` and `c.body()` pass for one header), as
 * `Object.fromEntries(res.headers)` would read them: names lower-cased, Set-Cookie as a list. Undefined
 * (read through `res.headers` instead) for a Headers object, a list of pairs, or anything the Fetch API
 * would change or refuse: a name twice in two cases, a value that is not a string or that it trims.
 */
function plainHeaders(init: unknown): Record<string, string | string[]> | undefined {
  if (typeof init !== "object" || init === null || Object.getPrototypeOf(init) !== Object.prototype) return undefined;
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(init)) {
    const lower = name.toLowerCase();
    if (typeof value !== "string" || !HEADER_NAME.test(name) || !PLAIN_VALUE.test(value) || lower in headers)
      return undefined;
    headers[lower] = lower === "set-cookie" ? [value] : value;
  }
  return headers;
}

function send(c: Context, response: HttpResponse): Response {
  // Hono types statuses as a union of literals; any status the route produced is valid here.
  const status = response.status as 200;
  const wire = response.body.length === 0 ? null : wireBody(response.body, response.text);
  const respond = (headers: Record<string, string | string[]>) =>
    wire === null
      ? c.body(null, status, headers)
      : c.body(typeof wire === "string" ? wire : bodyBytes(wire), status, headers);
  const entries = Object.entries(response.headers);
  if (entries.length < 2 || !entries.every(([name, value]) => isPlainHeader(name, value)))
    return respond(response.headers);
  // Given more than one header, Hono builds a Headers object (and @hono/node-server then writes the
  // response through its slower path); given one, it passes the plain object on. So the first goes
  // in, with Hono's own handling of headers set earlier (`c.header()`), and the rest are added after:
  // to that same object while it is what node-server kept, else through the Response's headers.
  const headers: Record<string, string | string[]> = {};
  let res: Response | undefined;
  let plain = false;
  for (const [name, value] of entries) {
    if (res === undefined) {
      headers[name] = value;
      res = respond(headers);
      plain = nodeServerKept(res)?.[2] === headers;
    } else if (plain) headers[name] = value;
    else if (typeof value === "string") res.headers.set(name, value);
    else for (const item of value) res.headers.append(name, item);
  }
  return res ?? respond(response.headers);
}

/** A header that goes out the same written from a plain object or through a Headers object. */
function isPlainHeader(name: string, value: string | string[] | undefined): boolean {
  if (!HEADER_NAME.test(name) || name !== name.toLowerCase()) return false;
  return typeof value === "string"
    ? PLAIN_VALUE.test(value)
    : Array.isArray(value) && value.every((item) => PLAIN_VALUE.test(item));
}
