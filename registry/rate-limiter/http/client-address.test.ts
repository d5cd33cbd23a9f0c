import { describe, expect, it } from "vitest";
import { addressKey, addressList, addressReader, checkIpv6Prefix } from "./client-address";

describe("the client address", () => {
  it("counts proxy hops from our side, never trusting the leftmost X-Forwarded-For entry", () => {
    const oneProxy = addressReader(1);
    expect(oneProxy("10.0.0.5", "6.6.6.6, 203.0.113.7")).toBe("203.0.113.7");
    expect(addressReader(2)("10.0.0.5", "6.6.6.6, 203.0.113.7, 10.0.0.9")).toBe("203.0.113.7");
    expect(addressReader(0)("203.0.113.7", "6.6.6.6")).toBe("203.0.113.7");
  });

  it("fewer entries than proxies (the request bypassed one): its own peer, not a written entry", () => {
    expect(addressReader(2)("198.51.100.1", "6.6.6.6")).toBe("198.51.100.1");
    expect(addressReader(1)("198.51.100.1", undefined)).toBe("198.51.100.1");
  });

  it("a list of proxies: skips them from our side, the first other address is the caller", () => {
    const read = addressReader(["10.0.0.0/8", "2001:db8:ffff::1"]);
    expect(read("10.0.0.5", "6.6.6.6, 203.0.113.7, 10.1.2.3")).toBe("203.0.113.7");
    expect(read("2001:db8:ffff::1", "203.0.113.7")).toBe("203.0.113.7");
    expect(read("198.51.100.1", "6.6.6.6")).toBe("198.51.100.1");
  });

  it("strips ports, brackets and zones that proxies add", () => {
    expect(addressReader(1)("10.0.0.5", "203.0.113.7:5123")).toBe("203.0.113.7");
    expect(addressReader(1)("10.0.0.5", "[2001:db8::1]:443")).toBe("2001:db8::1");
  });

  it("keys IPv6 by its /56 (configurable) and IPv4-mapped IPv6 as the IPv4 address", () => {
    expect(addressKey("2001:db8:aa:bb01::1", 56)).toBe("2001:db8:aa:bb00:0:0:0:0/56");
    expect(addressKey("2001:db8:aa:bbff:1:2:3:4", 56)).toBe("2001:db8:aa:bb00:0:0:0:0/56");
    expect(addressKey("2001:db8:aa:bb01::1", 64)).toBe("2001:db8:aa:bb01:0:0:0:0/64");
    expect(addressKey("::ffff:203.0.113.7", 56)).toBe("203.0.113.7");
    expect(addressKey("::ffff:cb00:7107", 56)).toBe("203.0.113.7");
    expect(addressKey("203.0.113.7", 56)).toBe("203.0.113.7");
  });

  it("refuses options it cannot honour, naming them", () => {
    expect(() => addressReader(-1)).toThrow(/Invalid trustProxy -1/);
    expect(() => addressReader(["10.0.0.0/33"])).toThrow(/Invalid trustProxy entry "10.0.0.0\/33"/);
    expect(() => addressReader(["proxy.internal"])).toThrow(/Invalid trustProxy entry/);
    expect(() => checkIpv6Prefix(0)).toThrow(/Invalid ipv6Prefix 0/);
    expect(() => addressList(["10.0.0.0/8", "*"], "allowList entry")).toThrow(/Invalid allowList entry "\*"/);
  });
});
