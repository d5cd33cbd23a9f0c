// Strips the credentials HTTP client errors carry (axios, got, undici, node's http) before an error is logged.
import { stdSerializers } from "pino";
import { redactUrlCredentials } from "./redact-url";

const SECRET_NAME = /^(?:authorization|proxy-authorization|cookie|set-cookie|x-api-key)$/i;
/** Whole request heads, as text or a flat name/value list, where no header name can be picked out. */
const RAW_HEADS = new Set(["_header", "outputData", "rawHeaders"]);
/** Deeper than any header location a client library uses; it also bounds a ClientRequest's huge graph. */
const MAX_DEPTH = 6;

/**
 * pino's error serializer, then a copy of the result with every secret header redacted wherever
 * it sits: axios's `err.config.headers`, `err.request._header` and `err.response.config.headers`,
 * got's `err.options.headers`, undici's `err.headers`, node's `ClientRequest._header`; and the
 * credentials of any URL in its text (`postgres://user:password@host` in a driver's message). A serializer
 * runs only for `err` fields, so ordinary lines keep pino's speed (wildcard redact paths this deep
 * would cost every line).
 *
 * @example
 * createLogger({ serializers: { err: serializeError } });
 */
export function serializeError(err: unknown): unknown {
  return redacted(stdSerializers.err(err as Error), 0, new Set());
}

function redacted(value: unknown, depth: number, path: Set<object>): unknown {
  if (typeof value === "string") return redactUrlCredentials(value);
  if (typeof value !== "object" || value === null) return value;
  if (ArrayBuffer.isView(value)) return `[${value.byteLength} bytes]`;
  if (path.has(value)) return "[Circular]";
  if (depth >= MAX_DEPTH) return "[Object]";
  path.add(value);
  let copy: unknown;
  if (Array.isArray(value)) {
    copy = value.map((item) => redacted(item, depth + 1, path));
  } else {
    const fields: Record<string, unknown> = {};
    for (const [name, field] of Object.entries(value)) {
      fields[name] = SECRET_NAME.test(name) || RAW_HEADS.has(name) ? "[Redacted]" : redacted(field, depth + 1, path);
    }
    copy = fields;
  }
  path.delete(value);
  return copy;
}
