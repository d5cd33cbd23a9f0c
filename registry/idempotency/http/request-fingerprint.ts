// What an HTTP request's fingerprint covers: method, concrete path, canonical query and body.
import { hashPayload, sha256Hex } from "../fingerprint";
/** The fingerprint's input for a request, before hashing. */
export type RequestFingerprint = { method: string; path: string; query: Array<[string, string | null]>; bodyHash: string };

/**
 * The input of the default fingerprint. The path is the concrete one (`/accounts/A/withdrawals`,
 * never the route's template), so one key sent to two resources is a conflict, never a replay.
 * The body enters as its own hash, so it keeps the depth limit it has on its own.
 *
 * @example
 * requestFingerprint("POST", "/accounts/A/withdrawals?to=bob&amount=5", { note: "rent" });
 * // { method: "POST", path: "/accounts/A/withdrawals", query: [["amount", "5"], ["to", "bob"]], bodyHash: "9f2c…" }
 */
export function requestFingerprint(method: string, url: string, body: unknown): RequestFingerprint {
  const start = url.indexOf("?");
  const path = start === -1 ? url : url.slice(0, start);
  return { method: method.toUpperCase(), path, query: canonicalQuery(start === -1 ? "" : url.slice(start + 1)), bodyHash: hashPayload(body) };
}

/**
 * `hashPayload(requestFingerprint(method, url, body))`, the hash every adapter keys a request by.
 * The fingerprint's canonical JSON is written out directly (keys in sorted order, values as
 * `JSON.stringify` writes them): its shape is fixed, so walking and sorting it on every request
 * buys nothing, and the hash stays the one recorded keys already carry.
 *
 * @example
 * requestHash("POST", "/payments?b=2&a", { amount: 5 }) === hashPayload(requestFingerprint("POST", "/payments?b=2&a", { amount: 5 })); // true
 */
export function requestHash(method: string, url: string, body: unknown): string {
  const fingerprint = requestFingerprint(method, url, body);
  let query = "";
  for (const [name, value] of fingerprint.query) query += `${query === "" ? "" : ","}[${JSON.stringify(name)},${value === null ? "null" : JSON.stringify(value)}]`;
  return sha256Hex(`{"bodyHash":"${fingerprint.bodyHash}","method":${JSON.stringify(fingerprint.method)},"path":${JSON.stringify(fingerprint.path)},"query":[${query}]}`);
}

/**
 * The query's parameters sorted by name, as sent: not decoded, because decoding folds distinct
 * bytes (`%FF` and `%FE` both become U+FFFD) and could make two requests look alike. A stable sort
 * keeps repeated names in order (`?tag=a&tag=b` differs from `?tag=b&tag=a`); a name without `=`
 * has the value null (`?a` differs from `?a=`).
 *
 * @example
 * canonicalQuery("b=2&a=1&a=0"); // [["a", "1"], ["a", "0"], ["b", "2"]]
 */
export function canonicalQuery(query: string): Array<[string, string | null]> {
  const pairs: Array<[string, string | null]> = [];
  for (const part of query.split("&")) {
    if (part === "") continue;
    const equals = part.indexOf("=");
    pairs.push(equals === -1 ? [part, null] : [part.slice(0, equals), part.slice(equals + 1)]);
  }
  return pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The path and query of an absolute URL (a fetch `Request.url`), read from the string rather than
 * parsed with `new URL` on every request: a Request's URL is already parsed and serialized.
 *
 * @example
 * requestTarget("https://api.example.com/payments?to=bob#x"); // "/payments?to=bob"
 */
export function requestTarget(absoluteUrl: string): string {
  const scheme = absoluteUrl.indexOf("://");
  const start = absoluteUrl.indexOf("/", scheme === -1 ? 0 : scheme + 3);
  if (start === -1) return "/";
  const hash = absoluteUrl.indexOf("#", start);
  return hash === -1 ? absoluteUrl.slice(start) : absoluteUrl.slice(start, hash);
}
