// The fetch adapter reads a request's body once, for the fingerprint; the route then reads that same body.
import { isJsonContentType, parseJsonBody } from "../http/json-body";

/**
 * A body read once: its bytes or, for JSON, its text (`bytesOf` encodes it when the route asks for
 * bytes), and what the fingerprint parsed of them (the route's `json()` gets it).
 */
export type ReadBody = { bytes?: Uint8Array; text?: string; parsed: unknown; json: boolean };

const decoder = new TextDecoder();
const encoder = new TextEncoder();
const FORM = /^(multipart\/form-data|application\/x-www-form-urlencoded)/i;

/** Reads the body (JSON, form or text) once; `parsed` is what the fingerprint hashes. */
export async function readBody(request: Request): Promise<ReadBody> {
  const type = request.headers.get("content-type") ?? "";
  if (FORM.test(type)) {
    const bytes = new Uint8Array(await request.arrayBuffer());
    const form = await new Response(bytes, { headers: { "content-type": type } }).formData();
    // Pairs, not an object: a repeated field (`tag=a&tag=b`) is part of what was asked for.
    const pairs = [...form].map(([name, value]) => [
      name,
      typeof value === "string" ? value : { file: value.name, size: value.size },
    ]);
    return { bytes, parsed: pairs, json: false };
  }
  // JSON as the runtime's own `text()` decodes it, what its `json()` parses (a byte-order mark dropped,
  // invalid UTF-8 as U+FFFD): on @hono/node-server that skips the copy `arrayBuffer()` makes.
  if (isJsonContentType(type)) {
    const text = await request.text();
    return { text, parsed: parseJsonBody(text), json: text !== "" };
  }
  const bytes = new Uint8Array(await request.arrayBuffer());
  return { bytes, parsed: bytes.length === 0 ? undefined : decoder.decode(bytes), json: false };
}

/** The body's bytes: as read, or a JSON body's text as UTF-8 (made once, on the route's first read of bytes). */
function bytesOf(body: ReadBody): Uint8Array {
  body.bytes ??= encoder.encode(body.text ?? "");
  return body.bytes;
}

const unusable = () => new TypeError("Body is unusable: the route already read this request's body.");

/** What each body method answers from the bytes read once. */
const BODY_READERS: Record<string, (body: ReadBody, request: Request) => unknown> = {
  // The fingerprint's parse is handed over, not parsed again: it was hashed before the route runs.
  json: (body) => (body.json ? body.parsed : (JSON.parse(body.text ?? decoder.decode(bytesOf(body))) as unknown)),
  text: (body) => body.text ?? decoder.decode(bytesOf(body)),
  arrayBuffer: (body) => bytesOf(body).slice().buffer,
  bytes: (body) => bytesOf(body).slice(),
  blob: (body, request) => new Blob([bytesOf(body).slice()], { type: request.headers.get("content-type") ?? "" }),
  formData: (body, request) => new Response(bytesOf(body).slice(), { headers: request.headers }).formData(),
};

/**
 * The runtime's request as the route sees it, its body already read: every property (Next.js's
 * `nextUrl` and `cookies`, `headers`, `signal`) is the request's own, and the body methods answer
 * from the bytes read once. A view, not a copy: `new Request(...)` costs more than the rest of a
 * replay, a `clone()` tees the body's stream, and the request itself and its prototype stay untouched.
 * As on any Request, the body can be read once; `clone()` gives another view to read it again.
 * Each method is made on its first access and kept with the view, so a route that never reads a
 * method pays nothing for it, and reading one twice gives the same function.
 */
export function withReadBody(request: Request, body: ReadBody): Request {
  let used = false;
  let stream: ReadableStream<Uint8Array> | null | undefined;
  const unread = (): boolean => !used && !(stream?.locked ?? false);
  const methods = new Map<PropertyKey, { of: unknown; method: unknown }>();
  const make = (name: PropertyKey, value: unknown): unknown => {
    if (name === "clone") {
      return () => {
        if (!unread()) throw unusable();
        return withReadBody(request, body);
      };
    }
    const reader = typeof name === "string" && Object.hasOwn(BODY_READERS, name) ? BODY_READERS[name] : undefined;
    if (reader) {
      return (): Promise<unknown> => {
        if (!unread()) return Promise.reject(unusable());
        used = true;
        try {
          return Promise.resolve(reader(body, request));
        } catch (err) {
          return Promise.reject(err instanceof Error ? err : new Error(String(err)));
        }
      };
    }
    // The request's own methods run on the request itself (a native one checks its `this`).
    const own = value as (this: Request, ...args: unknown[]) => unknown;
    return (...args: unknown[]) => Reflect.apply(own, request, args);
  };
  return new Proxy(request, {
    get(target, name) {
      if (name === "body") {
        if (stream === undefined) stream = used ? null : new Response(bytesOf(body).slice()).body;
        return stream;
      }
      if (name === "bodyUsed") return !unread();
      // Every body method is answered here, even one this runtime's Request lacks (`bytes` before Node 22).
      const overridden = name === "clone" || (typeof name === "string" && Object.hasOwn(BODY_READERS, name));
      const value: unknown = overridden ? undefined : Reflect.get(target, name, target);
      if (!overridden && typeof value !== "function") return value;
      const known = methods.get(name);
      if (known !== undefined && known.of === value) return known.method;
      const method = make(name, value);
      methods.set(name, { of: value, method });
      return method;
    },
  });
}
