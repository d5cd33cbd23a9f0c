// The key of a request: route template + caller (user id, else the client address), and the Idempotency-Key when asked.
import { addressKey, checkIpv6Prefix, type AddressReader } from "./client-address";
import { idempotencyKeyOf } from "./idempotency-key";
import type { FrameworkDefaults, MaybePromise, RateLimitRouteOptions } from "./route-options";

/** The client address of a request as its framework hands it over, after the `trustProxy` rule. */
export function addressOfRequest<Req>(
  defaults: FrameworkDefaults<Req>,
  read: AddressReader,
): (req: Req) => string | undefined {
  return (req) => read(defaults.peerOf(req), defaults.headerOf(req, "x-forwarded-for"));
}

/**
 * JSON arrays keep the parts apart: no user id or header value can forge another caller's key.
 *
 * @example
 * const keyOf = requestKey(options, expressDefaults, addressOf);
 * await keyOf(req); // '["POST /payments","user:u_1"]'
 */
export function requestKey<Req>(
  options: RateLimitRouteOptions<Req>,
  defaults: FrameworkDefaults<Req>,
  addressOf: (req: Req) => string | undefined,
): (req: Req) => MaybePromise<string | undefined> {
  const ipv6Prefix = checkIpv6Prefix(options.ipv6Prefix ?? 56);
  const callerOfId = (req: Req, id: unknown): string => {
    if (typeof id === "string" || typeof id === "number") return `user:${id}`;
    const address = addressOf(req);
    // Without a user or an address every anonymous client shares one quota: say so in the key.
    return `ip:${address === undefined ? "unknown" : addressKey(address, ipv6Prefix)}`;
  };
  const { getUserId } = options;
  // Every request passes here: a getUserId that answers at once costs no promise.
  const callerOf = (req: Req): MaybePromise<string> => {
    const id = getUserId ? getUserId(req) : defaults.userIdOf(req);
    // The callback is made only for a promise: no closure per request otherwise.
    return isThenable(id) ? Promise.resolve(id).then((resolved) => callerOfId(req, resolved)) : callerOfId(req, id);
  };
  const routeOf = options.getRoute ?? defaults.routeOf;

  if (options.keyBy === "idempotencyKey") {
    return function idempotencyRequestKey(req: Req): MaybePromise<string | undefined> {
      // null (a header the idempotency block refuses) is one key per caller: garbage buys no quota.
      const key = idempotencyKeyOf(defaults.headerOf(req, "idempotency-key"));
      if (key === undefined) return undefined;
      const route = routeOf(req);
      const caller = callerOf(req);
      return isThenable(caller)
        ? caller.then((resolved) => jsonArray3(route, resolved, key))
        : jsonArray3(route, caller, key);
    };
  }
  return function routeRequestKey(req: Req): MaybePromise<string> {
    const route = routeOf(req);
    const caller = callerOf(req);
    return isThenable(caller) ? caller.then((resolved) => jsonArray2(route, resolved)) : jsonArray2(route, caller);
  };
}

/**
 * True when `key[from..to)` is text JSON.stringify writes as itself between quotes: no quote,
 * backslash, control character or surrogate (it escapes a lone one; a pair takes the general path too).
 */
function plainBetween(key: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const code = key.charCodeAt(i);
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return false;
  }
  return true;
}

/**
 * `JSON.stringify([a, b])`, the same string, without the array and the serializer for the usual key
 * (every request builds one): anything that needs escaping, or is not a string, goes through
 * JSON.stringify. The parts are checked inside the key itself: one pass over one string, which the
 * first read flattens once (the limiter's table hashes that flat string), where checking each part
 * flattened the route, then the key again.
 */
function jsonArray2(a: string, b: string): string {
  if (typeof a !== "string" || typeof b !== "string") return JSON.stringify([a, b]);
  const key = `["${a}","${b}"]`;
  const second = a.length + 5;
  return plainBetween(key, 2, second - 3) && plainBetween(key, second, key.length - 2) ? key : JSON.stringify([a, b]);
}

/** `JSON.stringify([a, b, c])`, as `jsonArray2`. */
function jsonArray3(a: string, b: string, c: string | null): string {
  if (typeof a !== "string" || typeof b !== "string" || typeof c !== "string") return JSON.stringify([a, b, c]);
  const key = `["${a}","${b}","${c}"]`;
  const second = a.length + 5;
  const third = second + b.length + 3;
  return plainBetween(key, 2, second - 3) &&
    plainBetween(key, second, third - 3) &&
    plainBetween(key, third, key.length - 2)
    ? key
    : JSON.stringify([a, b, c]);
}

/** A promise, or any thenable (a getUserId may answer with another library's). */
function isThenable<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === "function";
}
