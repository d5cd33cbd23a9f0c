// What an HTTP request's fingerprint covers: method, concrete path, canonical query and body.
import { hashPayload } from "../fingerprint";
/** The fingerprint's input for a request, before hashing. */
export type RequestFingerprint = {
  method: string;
  path: string;
  query: Array<[string, string | null]>;
  bodyHash: string;
};

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
  return {
    method: method.toUpperCase(),
    path,
    query: canonicalQuery(start === -1 ? "" : url.slice(start + 1)),
    bodyHash: hashPayload(body),
  };
}

/**
 * `canonicalJson(requestFingerprint(method, url, body))`, the same text, written out directly: no
 * object, no key sort and no walk of the query pairs per request. Its keys are already in order.
 *
 * @example
 * requestFingerprintJson("POST", "/p?b=2&a", {}); // '{"bodyHash":"44136f…","method":"POST","path":"/p","query":[["a",null],["b","2"]]}'
 */
export function requestFingerprintJson(method: string, url: string, body: unknown): string {
  const start = url.indexOf("?");
  const path = start === -1 ? url : url.slice(0, start);
  let query = "";
  if (start !== -1) {
    for (const [name, value] of canonicalQuery(url.slice(start + 1)))
      query += `${query === "" ? "" : ","}[${JSON.stringify(name)},${value === null ? "null" : JSON.stringify(value)}]`;
  }
  return `{"bodyHash":"${hashPayload(body)}","method":${JSON.stringify(method.toUpperCase())},"path":${JSON.stringify(path)},"query":[${query}]}`;
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
