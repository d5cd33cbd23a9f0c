// Records what a route writes to a Node ServerResponse, and holds it back until the record is stored.
import type { ServerResponse } from "node:http";
import { normalizeHeaders, type HttpResponse, type Uncaptured } from "./http-response";

export type NodeResponseCapture = {
  /** The route's whole response once it calls `end()`; `{ uncaptured }` when it pipes a stream. */
  response: Promise<HttpResponse | Uncaptured>;
  /** Sends the held-back response. Called after the record is written, so a client that retries at once gets the replay. */
  release(): void;
};

type Callback = (err?: Error | null) => void;

/**
 * Buffers `write()`s and `end()` on this one response object (headers stay on it as the route set
 * them). A piped stream, which is how `sendFile` and `stream.pipe(res)` answer, is let through
 * untouched: it can be large or endless, so it is never recorded.
 *
 * @example
 * const capture = captureNodeResponse(res);
 * next();
 * const response = await capture.response;
 * capture.release();
 */
export function captureNodeResponse(res: ServerResponse): NodeResponseCapture {
  // Put back exactly as found: the prototype's methods, or another middleware's own wrappers (compression).
  const write = Object.getOwnPropertyDescriptor(res, "write");
  const end = Object.getOwnPropertyDescriptor(res, "end");
  if (!write && !end) toDictionary(res);
  const chunks: Buffer[] = [];
  let body: Buffer | undefined;
  let onEnd: Callback | undefined;
  let resolve!: (response: HttpResponse | Uncaptured) => void;
  const response = new Promise<HttpResponse | Uncaptured>((ok) => {
    resolve = ok;
  });

  const restore = () => {
    putBack(res, "write", write);
    putBack(res, "end", end);
    res.off("pipe", passThrough);
  };
  function passThrough() {
    restore();
    for (const chunk of chunks) res.write(chunk);
    resolve({ uncaptured: "the route piped a stream into the response" });
  }
  res.on("pipe", passThrough);

  res.write = function captureWrite(chunk: unknown, encoding?: unknown, callback?: unknown) {
    chunks.push(toBuffer(chunk, encoding));
    const done = typeof encoding === "function" ? encoding : callback;
    if (typeof done === "function") process.nextTick(done);
    return true;
  } as ServerResponse["write"];

  res.end = function captureEnd(chunk?: unknown, encoding?: unknown, callback?: unknown) {
    if (body) return res;
    const done = [chunk, encoding, callback].find((arg) => typeof arg === "function");
    if (chunk !== undefined && chunk !== null && typeof chunk !== "function") chunks.push(toBuffer(chunk, encoding));
    onEnd = done as Callback | undefined;
    const [only] = chunks;
    body = chunks.length === 1 && only ? only : Buffer.concat(chunks);
    restore();
    resolve({ status: res.statusCode, headers: normalizeHeaders(res.getHeaders()), body });
    return res;
  } as ServerResponse["end"];

  return {
    response,
    release() {
      if (!body) return;
      if (onEnd) res.end(body, onEnd);
      else res.end(body);
    },
  };
}

function toBuffer(chunk: unknown, encoding: unknown): Buffer {
  if (typeof chunk === "string")
    return Buffer.from(chunk, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8");
  // A Buffer is kept as it is (what Express's res.send hands over): Node's own write() does not copy it either.
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw new TypeError("idempotency: a response chunk must be a string or bytes.");
}

function putBack(res: ServerResponse, name: "write" | "end", own: PropertyDescriptor | undefined): void {
  if (own) Object.defineProperty(res, name, own);
  else delete (res as Partial<Pick<ServerResponse, "write" | "end">>)[name];
}

/**
 * Express sets each response's prototype per request, which gives the object a hidden class of its
 * own: V8 then copies its whole layout (some 45 properties) for each property added to it, and again
 * for the first one deleted, as `restore` does. Adding and deleting one first makes the object a
 * dictionary, as it ended up anyway: `write` and `end` then go on and off as hash entries.
 */
function toDictionary(res: ServerResponse): void {
  const unpatched = res as { write?: unknown };
  unpatched.write = undefined;
  delete unpatched.write;
}
