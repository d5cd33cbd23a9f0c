// A response as the store keeps it (JSON-safe), and the header allow-list that decides what a replay repeats.
import type { HttpHeaders, HttpResponse } from "./http-response";

/** What `handler.execute` records for a route: the body's exact bytes, as UTF-8 text when they are valid UTF-8. */
export type StoredResponse = {
  status: number;
  headers: HttpHeaders;
  body: string;
  encoding: "utf8" | "base64";
};

/**
 * Replayed by default: the headers that describe the body's bytes or that the client acts on.
 * Everything else is left out, so a replay never repeats a cookie or credential, a hop-by-hop
 * header, or a Content-Length the framework computes again from the body.
 */
export const DEFAULT_REPLAY_HEADERS: readonly string[] = [
  "content-type",
  "content-encoding",
  "content-language",
  "location",
  "etag",
  "link",
  "cache-control",
];

const NEVER_REPLAYED =
  /^(?:content-length|connection|keep-alive|proxy-connection|transfer-encoding|te|trailer|upgrade|date)$|cookie|auth|token|secret|session|credential|api-?key|password/;

/**
 * The route's replayable header names: the defaults plus `extra`. Throws for a name that must
 * never be replayed, so the mistake shows up when the route is created, not in a leaked cookie.
 *
 * @example
 * replayableHeaders(["X-Request-Total"]); // Set { "content-type", ..., "x-request-total" }
 * replayableHeaders(["Set-Cookie"]); // throws TypeError
 */
export function replayableHeaders(extra: readonly string[] = []): ReadonlySet<string> {
  const names = new Set(DEFAULT_REPLAY_HEADERS);
  for (const name of extra.map((header) => header.toLowerCase())) {
    if (NEVER_REPLAYED.test(name)) throw new TypeError(`idempotency: the "${name}" header can never be replayed.`);
    names.add(name);
  }
  return names;
}

/**
 * Keeps the status, the body bytes and the replayable headers of a response.
 *
 * @example
 * toStoredResponse({ status: 201, headers: { "set-cookie": ["s=1"], location: "/p/1" }, body: Buffer.from("{}") }, replayableHeaders());
 * // { status: 201, headers: { location: "/p/1" }, body: "{}", encoding: "utf8" }
 */
export function toStoredResponse(response: HttpResponse, replayable: ReadonlySet<string>): StoredResponse {
  const headers = replayableOf(response.headers, replayable);
  const text = response.text ?? decodeUtf8(response.body);
  return text === undefined
    ? { status: response.status, headers, body: response.body.toString("base64"), encoding: "base64" }
    : { status: response.status, headers, body: text, encoding: "utf8" };
}

/**
 * The response to send for a replay: the same status and bytes, the headers the route allows
 * today (checked again on every replay, whether the record came from the store or a cache), and
 * the replay marker when the route sends one.
 *
 * @example
 * replayResponse({ status: 201, headers: { "set-cookie": "s=1" }, body: "{}", encoding: "utf8" }, replayableHeaders(), "idempotent-replayed");
 * // { status: 201, headers: { "idempotent-replayed": "true" }, body: <Buffer 7b 7d> }
 */
export function replayResponse(stored: StoredResponse, replayable: ReadonlySet<string>, marker?: string): HttpResponse {
  if (!isStoredResponse(stored))
    throw new TypeError("idempotency: the recorded response is not a stored HTTP response.");
  const headers = replayableOf(stored.headers, replayable);
  if (marker) headers[marker] = "true";
  const body = Buffer.from(stored.body, stored.encoding);
  // The recorded text goes out as it is: no check and decode of the bytes made from it (see `wireBody`).
  return stored.encoding === "utf8"
    ? { status: stored.status, headers, body, text: stored.body }
    : { status: stored.status, headers, body };
}

/** The replayable headers of `headers`, by name: no [name, value] array per header, as `Object.entries` makes. */
function replayableOf(headers: HttpHeaders, replayable: ReadonlySet<string>): HttpHeaders {
  const kept: HttpHeaders = {};
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value !== undefined && replayable.has(name)) kept[name] = value;
  }
  return kept;
}

/** True for what `toStoredResponse` returns: a record written by other code (or an older version) is not trusted blindly. */
export function isStoredResponse(value: unknown): value is StoredResponse {
  if (typeof value !== "object" || value === null) return false;
  const { status, headers, body, encoding } = value as Record<string, unknown>;
  return (
    Number.isInteger(status) &&
    typeof headers === "object" &&
    headers !== null &&
    typeof body === "string" &&
    (encoding === "utf8" || encoding === "base64")
  );
}

// `fatal` refuses invalid UTF-8 and `ignoreBOM` keeps a BOM: either would otherwise change the bytes.
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The bytes as text when they are valid UTF-8, else undefined (never a lossy U+FFFD). */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
}
