// The response the adapters exchange with the shared layer, and the result a wrapper-style `run` returns.
import { isUtf8 } from "node:buffer";

/** Header names are lower-case; a name that repeats (Set-Cookie, Link) holds an array. */
export type HttpHeaders = Record<string, string | string[]>;

/**
 * A response as it goes on the wire: the body is bytes, serialized exactly once. `text`, when set,
 * is the same body as the text it was encoded from (a wrapper's JSON, a replay's recorded text):
 * `wireBody` and the stored copy take it as it is, without checking and decoding the bytes again.
 */
export type HttpResponse = { status: number; headers: HttpHeaders; body: Buffer; text?: string };

/**
 * A Buffer's bytes as the plain Uint8Array a fetch `Response` (and Hono's `c.body`) takes: a view on the
 * same memory, not a copy. Typed on `ArrayBuffer`, which a Buffer's memory is at run time: with the DOM
 * lib (Next.js), `BodyInit` refuses `ArrayBufferLike`. Return type inferred: `Uint8Array<T>` exists only
 * from TypeScript 5.7.
 */
export function bodyBytes(buffer: Buffer) {
  return new Uint8Array(buffer.buffer as ArrayBuffer, buffer.byteOffset, buffer.byteLength);
}

/**
 * The body in the form Node writes cheapest: a string, when the bytes are UTF-8 (JSON and text are).
 * Node sends a string body in one write with the headers; a Buffer goes as a second chunk, a
 * `writev` measured at twice the cost of the bare route's write. Valid UTF-8 decodes and encodes
 * back to the same bytes, so what goes out is still exactly what was recorded.
 */
export function wireBody(body: Buffer, text?: string): string | Buffer {
  if (text !== undefined) return text;
  return isUtf8(body) ? body.toString("utf8") : body;
}

/** What a route that streamed its response produced: it went out as it is, so there is nothing to record, only why. */
export type Uncaptured = { uncaptured: string };

export function isUncaptured(answer: HttpResponse | Uncaptured | undefined): answer is Uncaptured {
  return answer !== undefined && "uncaptured" in answer;
}

/** What a wrapper-style route returns: the adapter serializes it once and sends those same bytes on every replay. */
export type RouteResult = {
  /** @default 200 */
  status?: number;
  /** A string goes out as text, bytes as they are, `undefined` as no body, anything else as JSON. */
  body?: unknown;
  /** Sent with the first response; only the replayable ones (see `replayHeaders`) are stored. */
  headers?: Record<string, string | number | readonly string[]>;
};

/**
 * Serializes a wrapper-style result. JSON keeps the route's key order: the bytes stored for replay
 * are these bytes, so a replay can never differ from the first response.
 *
 * @example
 * toHttpResponse({ status: 201, body: { id: "pay_1" }, headers: { Location: "/payments/pay_1" } });
 * // { status: 201, headers: { location: "/payments/pay_1", "content-type": "application/json; charset=utf-8" }, body: <Buffer> }
 */
export function toHttpResponse(result: RouteResult): HttpResponse {
  if (typeof result !== "object" || result === null) {
    throw new TypeError("idempotency: `run` must return { status?, body?, headers? }.");
  }
  const headers = normalizeHeaders(result.headers ?? {});
  const { body, contentType, text } = serializeBody(result.body);
  if (contentType && headers["content-type"] === undefined) headers["content-type"] = contentType;
  const response: HttpResponse = { status: result.status ?? 200, headers, body };
  if (text !== undefined) response.text = text;
  return response;
}

/**
 * Lower-cases names and turns numbers into strings, as `getHeaders()` of Node or Fastify returns them.
 *
 * @example
 * normalizeHeaders({ "Content-Length": 2, Link: ["<a>", "<b>"] }); // { "content-length": "2", link: ["<a>", "<b>"] }
 */
export function normalizeHeaders(
  headers: Record<string, string | number | readonly string[] | undefined>,
): HttpHeaders {
  const normalized: HttpHeaders = {};
  // By name: no [name, value] array per header, as `Object.entries` makes (this runs on every wrapper response).
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    normalized[name.toLowerCase()] = typeof value === "object" ? [...value] : String(value);
  }
  return normalized;
}

/** `text` only for JSON: `JSON.stringify` escapes a lone surrogate, so its text and its bytes always say the same. */
function serializeBody(body: unknown): { body: Buffer; contentType?: string; text?: string } {
  if (body === undefined) return { body: Buffer.alloc(0) };
  if (typeof body === "string") return { body: Buffer.from(body, "utf8"), contentType: "text/plain; charset=utf-8" };
  if (body instanceof Uint8Array) return { body: Buffer.from(body), contentType: "application/octet-stream" };
  const json = JSON.stringify(body);
  if (json === undefined) throw new TypeError("idempotency: the route's body cannot be serialized as JSON.");
  return { body: Buffer.from(json, "utf8"), contentType: "application/json; charset=utf-8", text: json };
}
