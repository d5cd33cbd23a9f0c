// fast-check generators for scenario 7: Idempotency-Key headers and request bodies, valid and hostile.
import fc from "fast-check";

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => String.fromCharCode(from + i));
const VISIBLE_ASCII = range(0x21, 0x7e);

/** 1-255 visible ASCII without `"` or `,`, which only mean something inside a quoted key. */
export const bareKey = fc.string({
  unit: fc.constantFrom(...VISIBLE_ASCII.filter((c) => c !== '"' && c !== ",")),
  minLength: 1,
  maxLength: 255,
});

/** Any 1-255 visible ASCII, sent as an RFC 8941 quoted string (escaping `"` and `\`), with optional whitespace around. */
export const quotedKey = fc
  .tuple(
    fc.string({ unit: fc.constantFrom(...VISIBLE_ASCII), minLength: 1, maxLength: 255 }),
    fc.constantFrom("", " ", "\t", "  "),
    fc.constantFrom("", " ", "\t"),
  )
  .map(([key, before, after]) => ({ key, header: `${before}"${key.replace(/[\\"]/g, "\\$&")}"${after}` }));

/** Header values Node's client can send (tab, SP, visible ASCII, latin-1) that are never a valid key. */
export const invalidKeyHeader = fc.oneof(
  fc.constant(""),
  fc.constantFrom(" ", "\t", '""', '"', '"abc', 'a"b', "a,b", "a, b"),
  fc.string({ unit: fc.constantFrom(...VISIBLE_ASCII), minLength: 256, maxLength: 600 }),
  fc
    .tuple(bareKey, fc.constantFrom(" ", "\t"), bareKey)
    .map(([a, space, b]) => `${a.slice(0, 100)}${space}${b.slice(0, 100)}`),
  fc
    .tuple(bareKey, fc.string({ unit: fc.constantFrom(...range(0x80, 0xff)), minLength: 1, maxLength: 3 }))
    .map(([a, latin1]) => `${a.slice(0, 100)}${latin1}`),
  // A quoted key broken at its end: an escaped closing quote, an unknown escape, or text after the quote.
  fc
    .tuple(quotedKey, fc.constantFrom('\\"', '\\x"', '"x'))
    .map(([{ header }, junk]) => header.trimEnd().slice(0, -1) + junk),
);

/** Bytes Node's HTTP parser refuses in a header value (controls, DEL, UTF-8 beyond latin-1 is fine for it). */
export const rawKeyBytes = fc.oneof(
  fc
    .tuple(bareKey, fc.constantFrom(0x00, 0x01, 0x08, 0x0b, 0x0c, 0x1f, 0x7f), bareKey)
    .map(([a, byte, b]) =>
      Buffer.concat([Buffer.from(a.slice(0, 50)), Buffer.from([byte]), Buffer.from(b.slice(0, 50))]),
    ),
  fc
    .string({ unit: "grapheme", minLength: 1, maxLength: 20 })
    .filter((s) => /[\u0080-\uffff]/.test(s))
    .map((s) => Buffer.from(s, "utf8")),
);

/** JSON objects with at least two members, for reordering. */
export const jsonObject = fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.jsonValue({ maxDepth: 3 }), {
  minKeys: 2,
  maxKeys: 8,
});

/** JSON values rich in unicode: astral code points, combining marks, RTL, and lone surrogates. */
export const unicodeValue = fc.oneof(
  fc.jsonValue({ maxDepth: 3, stringUnit: "grapheme" }),
  fc.jsonValue({ maxDepth: 3, stringUnit: "binary" }),
  fc.constantFrom("\ud800", "a\udfffb", "\u202etxt.exe", "e\u0301", "\ufeffbom", "\u{1f4a9}\u{1f469}\u200d\u{1f4bb}"),
);

/** Serializes like JSON.stringify, but as a member order and a string escaping of our choice. */
export function serializeObject(entries: Array<[string, unknown]>): string {
  return `{${entries.map(([name, value]) => `${JSON.stringify(name)}:${JSON.stringify(value)}`).join(",")}}`;
}

/** The same JSON text with every non-ASCII character escaped as \uXXXX: different bytes, equal value. */
export function escapeNonAscii(json: string): string {
  return json.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Text that is not a JSON object or array, which a strict JSON body parser must refuse. */
export const malformedJson = fc.oneof(
  // Not empty: Express reads an empty body as `{}`.
  fc.string({ minLength: 1, maxLength: 40 }).filter((s) => !isJsonContainer(s)),
  jsonObject.map((object) => JSON.stringify(object).slice(0, -1)),
  fc.constantFrom(
    "{",
    "[",
    "{]",
    '{"a":}',
    '{"a":1,}',
    "{'a':1}",
    "NaN",
    '{"a":undefined}',
    "\u0000{}",
    '{"a":"\u0001"}',
  ),
);

function isJsonContainer(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null;
  } catch {
    return false;
  }
}

export function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** A path segment as a client sends it (percent-encoded unicode), within Fastify's 100-character parameter limit. */
export const pathSegment = fc
  .string({ unit: "grapheme", minLength: 1, maxLength: 12 })
  .map(encodeURIComponent)
  .filter((segment) => segment.length <= 100 && segment !== "." && segment !== "..");

/** Two different segments: the same route, two resources. */
export const twoPathSegments = fc.tuple(pathSegment, pathSegment).filter(([a, b]) => a !== b);

/** 2 to 6 query parameters with distinct names, encoded as a client would. */
export const queryParameters = fc.uniqueArray(
  fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ unit: "grapheme", maxLength: 12 })),
  {
    minLength: 2,
    maxLength: 6,
    selector: ([name]) => name,
  },
);

export function queryString(parameters: Array<[string, string]>): string {
  return parameters.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join("&");
}

/** Authorization header values Node's client sends: schemes and tokens of visible ASCII, junk included. */
export const authorizationValue = fc.oneof(
  fc
    .string({ unit: fc.constantFrom(...VISIBLE_ASCII), minLength: 1, maxLength: 200 })
    .map((token) => `Bearer ${token}`),
  fc
    .string({ unit: fc.constantFrom(...VISIBLE_ASCII, " "), minLength: 1, maxLength: 300 })
    .filter((value) => value.trim() !== ""),
);
