// The request fingerprint: SHA-256 of a canonical JSON, so key order never changes the hash.
import * as crypto from "node:crypto";
import { IdempotencyError } from "./errors";

/** Deeper payloads are refused: no real request needs them, and recursion must stay bounded. */
export const MAX_PAYLOAD_DEPTH = 256;

/**
 * JSON with object keys sorted at every level; otherwise the same rules as `JSON.stringify`
 * (`toJSON` honoured, `undefined` and functions dropped from objects, non-finite numbers as null).
 *
 * @example
 * canonicalJson({ b: 1, a: [2, { d: 3, c: 4 }] }); // '{"a":[2,{"c":4,"d":3}],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  return serialize(value, 0) ?? "null";
}

/** Hex SHA-256 of the payload's canonical JSON. */
export function hashPayload(payload: unknown): string {
  return sha256Hex(canonicalJson(payload));
}

/** Node's one-shot `crypto.hash` (20.12+), read off the namespace: a named import fails to load (ESM) or type-check on older Node and @types/node. */
const oneShot = (crypto as unknown as { hash?: (algorithm: string, data: string, encoding: "hex") => string }).hash;

/** Hex SHA-256 of a string's UTF-8 bytes: `crypto.hash` gives `createHash`'s digest with no Hash object per call. */
export const sha256Hex: (text: string) => string = oneShot
  ? (text) => oneShot("sha256", text, "hex")
  : (text) => crypto.createHash("sha256").update(text).digest("hex");

function serialize(value: unknown, depth: number): string | undefined {
  if (depth > MAX_PAYLOAD_DEPTH) {
    throw new IdempotencyError(
      "IDEMPOTENCY_PAYLOAD_INVALID",
      `The request payload is nested deeper than ${MAX_PAYLOAD_DEPTH} levels (or is circular).`,
    );
  }
  if (value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON === "function") {
    value = (value as { toJSON(): unknown }).toJSON();
  }
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      return Number.isFinite(value) ? String(value) : "null";
    case "boolean":
      return value ? "true" : "false";
    case "bigint":
      throw new IdempotencyError(
        "IDEMPOTENCY_PAYLOAD_INVALID",
        "The request payload contains a BigInt, which JSON cannot represent.",
      );
    case "object":
      if (value === null) return "null";
      if (Array.isArray(value)) return serializeArray(value, depth);
      return serializeObject(value as Record<string, unknown>, depth);
    default:
      return undefined;
  }
}

// Both build one string as they go, not an array of parts to join: this runs on every request body.
function serializeArray(array: unknown[], depth: number): string {
  let json = "[";
  for (let i = 0; i < array.length; i++) json += `${i === 0 ? "" : ","}${serialize(array[i], depth + 1) ?? "null"}`;
  return `${json}]`;
}

function serializeObject(object: Record<string, unknown>, depth: number): string {
  let json = "";
  for (const key of Object.keys(object).sort()) {
    const member = serialize(object[key], depth + 1);
    if (member !== undefined) json += `${json === "" ? "" : ","}${JSON.stringify(key)}:${member}`;
  }
  return `{${json}}`;
}
