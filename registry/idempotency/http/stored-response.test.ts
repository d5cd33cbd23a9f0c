import { describe, expect, it } from "vitest";
import { toHttpResponse, wireBody } from "./http-response";
import { replayableHeaders, replayResponse, toStoredResponse } from "./stored-response";

const roundTrip = (body: Buffer) => {
  const stored = toStoredResponse({ status: 200, headers: {}, body }, replayableHeaders());
  // The handler keeps the stored response as JSON text: go through it as the store does.
  return {
    stored,
    replayed: replayResponse(JSON.parse(JSON.stringify(stored)) as typeof stored, replayableHeaders()).body,
  };
};

describe("stored responses", () => {
  it("keeps UTF-8 bodies as readable text", () => {
    const { stored, replayed } = roundTrip(Buffer.from('{"b":1,"a":"café"}'));
    expect(stored).toMatchObject({ body: '{"b":1,"a":"café"}', encoding: "utf8" });
    expect(replayed.toString()).toBe('{"b":1,"a":"café"}');
  });

  it.each([
    ["binary bytes", Buffer.from([0x00, 0xff, 0xfe, 0x80])],
    ["a byte-order mark", Buffer.from([0xef, 0xbb, 0xbf, 0x61])],
    ["a NUL byte", Buffer.from("a\u0000b")],
    ["an empty body", Buffer.alloc(0)],
  ])("replays %s byte for byte", (_, body) => {
    expect(roundTrip(body).replayed.equals(body)).toBe(true);
  });

  it("keeps only the replayable headers", () => {
    const headers = {
      "content-type": "application/json",
      location: "/p/1",
      link: ["<a>; rel=next", "<b>; rel=prev"],
      "x-ledger-entry": "le_1",
      "set-cookie": ["session=secret"],
      "content-length": "12",
      "transfer-encoding": "chunked",
      "x-debug": "1",
    };
    const stored = toStoredResponse(
      { status: 201, headers, body: Buffer.alloc(0) },
      replayableHeaders(["X-Ledger-Entry"]),
    );
    expect(stored.headers).toEqual({
      "content-type": "application/json",
      location: "/p/1",
      link: ["<a>; rel=next", "<b>; rel=prev"],
      "x-ledger-entry": "le_1",
    });
  });

  it.each(["Set-Cookie", "Authorization", "WWW-Authenticate", "X-Session-Token", "Content-Length", "Connection"])(
    "refuses to replay %s, even when a route asks",
    (name) => {
      expect(() => replayableHeaders([name])).toThrow(TypeError);
    },
  );

  it("applies the allow-list again on replay: a stored Set-Cookie (from an older version or a shared cache) never goes out", () => {
    const stored = {
      status: 201,
      headers: { "set-cookie": ["session=secret"], location: "/p/1" },
      body: "{}",
      encoding: "utf8" as const,
    };
    expect(replayResponse(stored, replayableHeaders()).headers).toEqual({ location: "/p/1" });
  });

  it("marks a replay with the route's replay header, and with none when it has none", () => {
    const stored = { status: 201, headers: {}, body: "{}", encoding: "utf8" as const };
    expect(replayResponse(stored, replayableHeaders(), "idempotent-replayed").headers).toEqual({
      "idempotent-replayed": "true",
    });
    expect(replayResponse(stored, replayableHeaders()).headers).toEqual({});
  });

  it("sends a replay's recorded text as the same bytes as its body, a record holding a lone surrogate too", () => {
    for (const text of ['{"a":"café"}', "bad \ud800 half"]) {
      const replayed = replayResponse({ status: 200, headers: {}, body: text, encoding: "utf8" }, replayableHeaders());
      expect(Buffer.from(wireBody(replayed.body, replayed.text))).toEqual(replayed.body);
    }
  });

  it("stores a wrapper's JSON as the text its bytes decode to", () => {
    const response = toHttpResponse({ status: 201, body: { note: "bad \ud800 half", a: "café" } });
    expect(toStoredResponse(response, replayableHeaders()).body).toBe(response.body.toString("utf8"));
    expect(wireBody(response.body, response.text)).toBe(response.body.toString("utf8"));
  });

  it("refuses a recorded value that is not a stored response", () => {
    expect(() => replayResponse({ status: "201" } as never, replayableHeaders())).toThrow(TypeError);
  });
});
