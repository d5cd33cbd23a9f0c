// The key of a request: route template + caller (user id, else the client address), and the Idempotency-Key when asked.
import { addressKey, checkIpv6Prefix, type AddressReader } from "./client-address";
import { idempotencyKeyOf } from "./idempotency-key";
import type { FrameworkDefaults, RateLimitRouteOptions } from "./limit-route";

/** The client address of a request as its framework hands it over, after the `trustProxy` rule. */
export function addressOfRequest<Req>(defaults: FrameworkDefaults<Req>, read: AddressReader): (req: Req) => string | undefined {
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
): (req: Req) => Promise<string | undefined> {
  const ipv6Prefix = checkIpv6Prefix(options.ipv6Prefix ?? 56);
  const callerOf = async (req: Req): Promise<string> => {
    const id = options.getUserId ? await options.getUserId(req) : defaults.userIdOf(req);
    if (typeof id === "string" || typeof id === "number") return `user:${id}`;
    const address = addressOf(req);
    // Without a user or an address every anonymous client shares one quota: say so in the key.
    return `ip:${address === undefined ? "unknown" : addressKey(address, ipv6Prefix)}`;
  };
  const routeOf = options.getRoute ?? defaults.routeOf;

  if (options.keyBy === "idempotencyKey") {
    return async function idempotencyRequestKey(req: Req): Promise<string | undefined> {
      // null (a header the idempotency block refuses) is one key per caller: garbage buys no quota.
      const key = idempotencyKeyOf(defaults.headerOf(req, "idempotency-key"));
      return key === undefined ? undefined : JSON.stringify([routeOf(req), await callerOf(req), key]);
    };
  }
  return async function routeRequestKey(req: Req): Promise<string> {
    return JSON.stringify([routeOf(req), await callerOf(req)]);
  };
}
