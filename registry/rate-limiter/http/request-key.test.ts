import { describe, expect, it } from "vitest";
import type { FrameworkDefaults } from "./limit-route";
import { requestKey } from "./request-key";

type Req = { route: string; user?: unknown; key?: string };

const defaults: FrameworkDefaults<Req> = {
  userIdOf: (req) => req.user,
  peerOf: () => "203.0.113.7",
  routeOf: (req) => req.route,
  headerOf: (req, name) => (name === "idempotency-key" ? req.key : undefined),
};
const address = () => "203.0.113.7";

// Stored keys must not change between versions (a new spelling would hand every caller a fresh quota):
// the key is exactly the JSON array of its parts, whatever they hold.
const AWKWARD = ["u_1", 'u"1', "u\\1", "u\n1", "u\u0000", "ü_1", "😀", "\ud800", "a\udc00b", "\u2028", "", "u/1"];
/** Routes with what needs escaping at either edge of the part too, where it meets the key's own quotes. */
const ROUTES = ["POST /payments", 'POST /a"b', "GET /ü/\\", '"', 'POST /"', '"POST /', "\\", "", "\u001f"];

describe("the key of a request", () => {
  it("is the JSON array of route and caller, for every user id a client could send", () => {
    const keyOf = requestKey<Req>({}, defaults, address);
    for (const id of AWKWARD) {
      for (const route of ROUTES) {
        expect(keyOf({ route, user: id })).toBe(JSON.stringify([route, `user:${id}`]));
      }
    }
    expect(keyOf({ route: "POST /payments", user: 42 })).toBe('["POST /payments","user:42"]');
    expect(keyOf({ route: "POST /payments" })).toBe('["POST /payments","ip:203.0.113.7"]');
  });

  it("no user id spells another caller's key", () => {
    const keyOf = requestKey<Req>({}, defaults, address);
    const forged = keyOf({ route: "POST /payments", user: 'u_1","user:u_2' });
    expect(forged).not.toBe(keyOf({ route: "POST /payments", user: "u_1" }));
    expect(JSON.parse(forged as string)).toEqual(["POST /payments", 'user:u_1","user:u_2']);
  });

  it('keyBy "idempotencyKey": route, caller and the header\'s key, and one key per caller for a refused header', async () => {
    const keyOf = requestKey<Req>({ keyBy: "idempotencyKey" }, defaults, address);
    for (const id of AWKWARD)
      for (const route of ROUTES)
        expect(keyOf({ route, user: id, key: "k-1" })).toBe(JSON.stringify([route, `user:${id}`, "k-1"]));
    // Keys that need escaping at their edges: a backslash (allowed unquoted), quotes from an sf-string.
    for (const [header, key] of [
      ["k\\", "k\\"],
      ["\\k", "\\k"],
      ['"\\"k\\""', '"k"'],
    ] as const)
      expect(keyOf({ route: "POST /payments", user: "u_1", key: header })).toBe(
        JSON.stringify(["POST /payments", "user:u_1", key]),
      );
    expect(keyOf({ route: "POST /payments", user: "u_1", key: "a, b" })).toBe('["POST /payments","user:u_1",null]');
    expect(keyOf({ route: "POST /payments", user: "u_1" })).toBeUndefined();
    const later = requestKey<Req>(
      { keyBy: "idempotencyKey", getUserId: () => Promise.resolve('u"1') },
      defaults,
      address,
    );
    expect(await later({ route: "POST /payments", key: "k-1" })).toBe('["POST /payments","user:u\\"1","k-1"]');
  });
});
