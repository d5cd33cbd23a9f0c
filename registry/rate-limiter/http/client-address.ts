// The caller's address, as a client cannot choose it: proxy hops counted from our side, IPv6 keyed by its prefix.
import { BlockList, isIP, isIPv4, isIPv6 } from "node:net";

/**
 * How many proxies in front of the app append to `X-Forwarded-For` (a number), or which addresses
 * are your proxies (a list of addresses and CIDRs, e.g. `["10.0.0.0/8", "fd00::/8"]`). `0`: the
 * socket's peer is the client and the header is ignored.
 */
export type TrustProxy = number | readonly string[];

export type AddressReader = (peer: string | undefined, forwardedFor: string | undefined) => string | undefined;

/**
 * Compiles the option once into the per-request reader. The client is never the leftmost
 * `X-Forwarded-For` entry by default: anyone can write that one.
 *
 * @example
 * const read = addressReader(1);
 * read("10.0.0.5", "6.6.6.6, 203.0.113.7"); // "203.0.113.7": the entry our one proxy appended
 */
export function addressReader(trustProxy: TrustProxy): AddressReader {
  const pick = typeof trustProxy === "number" ? byHops(trustProxy) : byList(trustProxy);
  return function clientAddress(peer, forwardedFor) {
    if (peer === undefined) return undefined;
    const chain = [
      ...(forwardedFor ?? "")
        .split(",")
        .map(plainAddress)
        .filter((a) => a !== ""),
      plainAddress(peer),
    ];
    return unmapped(pick(chain));
  };
}

/** Throws unless `ipv6Prefix` is a prefix length. */
export function checkIpv6Prefix(ipv6Prefix: number): number {
  if (!Number.isInteger(ipv6Prefix) || ipv6Prefix < 1 || ipv6Prefix > 128) {
    throw new Error(`Invalid ipv6Prefix ${ipv6Prefix}: an integer from 1 to 128 (56 keys a customer's site).`);
  }
  return ipv6Prefix;
}

function byHops(hops: number): (chain: string[]) => string {
  if (!Number.isSafeInteger(hops) || hops < 0)
    throw new Error(`Invalid trustProxy ${hops}: the number of proxies in front of the app (0 or more).`);
  // Fewer entries than proxies: the request did not come the way you deployed (it bypassed a proxy,
  // or wrote the header itself), so its own peer is all we know for certain.
  return (chain) => entry(chain, chain.length - 1 < hops ? chain.length - 1 : chain.length - 1 - hops);
}

function byList(proxies: readonly string[]): (chain: string[]) => string {
  const isTrusted = addressList(proxies, "trustProxy entry");
  // From our side leftwards, past every address that is one of our proxies.
  return (chain) => {
    let i = chain.length - 1;
    while (i > 0 && isTrusted(entry(chain, i))) i--;
    return entry(chain, i);
  };
}

/**
 * A membership test over addresses and CIDRs (IPv4 and IPv6); `what` names the option in errors.
 *
 * @example
 * const internal = addressList(["10.0.0.0/8", "2001:db8::/32"], "allowList entry");
 * internal("10.1.2.3"); // true
 */
export function addressList(entries: readonly string[], what: string): (address: string) => boolean {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = "", prefix] = entry.split("/");
    const family = isIP(address) === 6 ? "ipv6" : "ipv4";
    const bits = prefix === undefined ? undefined : Number(prefix);
    if (
      isIP(address) === 0 ||
      (bits !== undefined && !(Number.isInteger(bits) && bits >= 0 && bits <= (family === "ipv6" ? 128 : 32)))
    ) {
      throw new Error(`Invalid ${what} "${entry}": an IPv4 or IPv6 address, or a CIDR such as "10.0.0.0/8".`);
    }
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, bits, family);
  }
  return (address) => isIP(address) !== 0 && list.check(address, isIPv6(address) ? "ipv6" : "ipv4");
}

/** Drops what proxies add around an address: spaces, `[...]`, an IPv4 `:port`, an IPv6 zone. */
function plainAddress(entry: string): string {
  const trimmed = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(trimmed);
  if (bracketed) return (bracketed[1] ?? "").replace(/%.*$/, "");
  if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(trimmed)) return trimmed.slice(0, trimmed.lastIndexOf(":"));
  return trimmed.replace(/%.*$/, "");
}

/**
 * The address as a key: IPv4 as is (IPv4-mapped IPv6 too), IPv6 as its `/prefix` network, since
 * one customer holds a whole /56 or /64 and could rotate inside it. Anything else as is.
 *
 * @example
 * addressKey("2001:db8:aa:bb01::1", 56); // "2001:db8:aa:bb00:0:0:0:0/56"
 * addressKey("::ffff:203.0.113.7", 56);  // "203.0.113.7"
 */
export function addressKey(address: string, ipv6Prefix: number): string {
  const plain = unmapped(address);
  if (!isIPv6(plain)) return plain;
  const groups = ipv6Groups(plain);
  const masked = groups.map((group, i) => {
    const keep = Math.min(16, Math.max(0, ipv6Prefix - i * 16));
    return keep === 0 ? 0 : group & (0xffff << (16 - keep)) & 0xffff;
  });
  return `${masked.map((g) => g.toString(16)).join(":")}/${ipv6Prefix}`;
}

/** IPv4-mapped IPv6 (`::ffff:203.0.113.7`, a dual-stack socket's peer) as the IPv4 address; anything else as is. */
function unmapped(address: string): string {
  if (!isIPv6(address)) return address;
  const groups = ipv6Groups(address);
  if (!groups.slice(0, 5).every((g) => g === 0) || groups[5] !== 0xffff) return address;
  const [high = 0, low = 0] = groups.slice(6);
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, an IPv4 tail converted). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  const mapped = v4?.[1] ?? "";
  if (v4 && isIPv4(mapped)) {
    const [a = 0, b = 0, c = 0, d = 0] = mapped.split(".").map(Number);
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * The chain's entry at `index`, which callers keep inside it (the chain always holds the socket's
 * peer). Written without an assertion, so type-aware lint presets have nothing to rewrite.
 */
function entry(chain: readonly string[], index: number): string {
  return chain[index] ?? "";
}
