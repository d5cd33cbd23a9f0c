// The fetch adapter reads a request's body once, for the fingerprint; the route then reads that same body.
import { IdempotencyError } from "../errors";

/** A body read once: its bytes, and what the fingerprint parsed of them (the route's `json()` gets it). */
export type ReadBody = { bytes: Uint8Array; parsed: unknown; json: boolean };

const decoder = new TextDecoder();
const FORM = /^(multipart\/form-data|application\/x-www-form-urlencoded)/i;
const JSON_TYPE = /[/+]json\b/i;

/** Reads the body (JSON, form or text) once; `parsed` is what the fingerprint hashes. */
export async function readBody(request: Request): Promise<ReadBody> {
  const bytes = new Uint8Array(await request.arrayBuffer());
  const type = request.headers.get("content-type") ?? "";
  if (FORM.test(type)) {
    const form = await new Response(bytes, { headers: { "content-type": type } }).formData();
    // Pairs, not an object: a repeated field (`tag=a&tag=b`) is part of what was asked for.
    const pairs = [...form].map(([name, value]) => [name, typeof value === "string" ? value : { file: value.name, size: value.size }]);
    return { bytes, parsed: pairs, json: false };
  }
  if (bytes.length === 0) return { bytes, parsed: undefined, json: false };
  const text = decoder.decode(bytes);
  if (!JSON_TYPE.test(type)) return { bytes, parsed: text, json: false };
  try {
    return { bytes, parsed: JSON.parse(text), json: true };
  } catch {
    throw new IdempotencyError("IDEMPOTENCY_PAYLOAD_INVALID", "The request body is not valid JSON.");
  }
}

const unusable = () => new TypeError("Body is unusable: the route already read this request's body.");

/**
 * The runtime's request as the route sees it, its body already read: every property (Next.js's
 * `nextUrl` and `cookies`, `headers`, `signal`) is the request's own, and the body methods answer
 * from the bytes read once. A view, not a copy: `new Request(...)` costs more than the rest of a
 * replay, a `clone()` tees the body's stream, and the request itself and its prototype stay untouched.
 * As on any Request, the body can be read once; `clone()` gives another view to read it again.
 */
export function withReadBody(request: Request, body: ReadBody): Request {
  let used = false;
  let stream: ReadableStream<Uint8Array> | null | undefined;
  const take = (): Uint8Array => {
    if (used || stream?.locked) throw unusable();
    used = true;
    return body.bytes;
  };
  const read = <T>(convert: (bytes: Uint8Array) => T | Promise<T>) => async (): Promise<T> => convert(take());
  const overrides: Record<PropertyKey, unknown> = {
    // The fingerprint's parse is handed over, not parsed again: it was hashed before the route runs.
    json: read((bytes) => (body.json ? body.parsed : (JSON.parse(decoder.decode(bytes)) as unknown))),
    text: read((bytes) => decoder.decode(bytes)),
    arrayBuffer: read((bytes) => bytes.slice().buffer),
    bytes: read((bytes) => bytes.slice()),
    blob: read((bytes) => new Blob([bytes.slice()], { type: request.headers.get("content-type") ?? "" })),
    formData: read((bytes) => new Response(bytes.slice(), { headers: request.headers }).formData()),
    clone: () => {
      if (used || stream?.locked) throw unusable();
      return withReadBody(request, body);
    },
  };
  return new Proxy(request, {
    get(target, name) {
      if (name === "body") {
        if (stream === undefined) stream = used ? null : new Response(body.bytes.slice()).body;
        return stream;
      }
      if (name === "bodyUsed") return used || (stream?.locked ?? false);
      if (Object.hasOwn(overrides, name)) return overrides[name];
      // The request's own getters and methods run on the request itself (a native one checks its `this`).
      const value: unknown = Reflect.get(target, name, target);
      if (typeof value !== "function") return value;
      const method = value as (this: Request, ...args: unknown[]) => unknown;
      return (...args: unknown[]) => Reflect.apply(method, target, args);
    },
  });
}
