// The trace a problem belongs to: the active OpenTelemetry span's, else the W3C traceparent header's.

// RFC-style W3C Trace Context: version-traceid-parentid-flags, lower-case hex; version ff is invalid.
const TRACEPARENT = /^(?!ff)[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}(-.*)?$/;
const ZERO_TRACE_ID = "0".repeat(32);

/**
 * The trace id of a `traceparent` header, or `undefined` when the header is absent or malformed
 * (an all-zero id is invalid too).
 *
 * @example
 * traceIdOfTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"); // "4bf92f3577b34da6a3ce929d0e0e4736"
 */
export function traceIdOfTraceparent(header: string | null | undefined): string | undefined {
  const match = typeof header === "string" ? TRACEPARENT.exec(header.trim()) : null;
  const traceId = match?.[1];
  // Version 00 allows nothing after the flags.
  if (!match || traceId === ZERO_TRACE_ID || (header?.startsWith("00-") && match[3] !== undefined)) return undefined;
  return traceId;
}

/** The part of @opentelemetry/api's global registration this reads: the context manager. */
type OtelGlobal = { context?: { active(): { getValue(key: symbol): unknown } } };
type Span = { spanContext(): { traceId?: unknown } };

// @opentelemetry/api (1.x) registers itself on globalThis under this key, and keys the active span
// in a context by this symbol: reading them needs no import, so the package never becomes a dependency.
const OTEL_API = Symbol.for("opentelemetry.js.api.1");
const SPAN_KEY = Symbol.for("OpenTelemetry Context Key SPAN");

/**
 * The trace id of the span active for this request, when the app runs an OpenTelemetry SDK; else
 * `undefined`.
 */
export function activeSpanTraceId(): string | undefined {
  try {
    const api = (globalThis as Record<symbol, OtelGlobal | undefined>)[OTEL_API];
    const span = api?.context?.active().getValue(SPAN_KEY) as Span | undefined;
    const traceId = span?.spanContext().traceId;
    return typeof traceId === "string" && /^[0-9a-f]{32}$/.test(traceId) && traceId !== ZERO_TRACE_ID
      ? traceId
      : undefined;
  } catch {
    // A broken tracer must not break the error answer.
    return undefined;
  }
}

/**
 * The trace id every problem carries: the active span's, else the request's `traceparent`.
 *
 * @example
 * traceIdOf(request.headers.get("traceparent")); // "4bf92f3577b34da6a3ce929d0e0e4736" or undefined
 */
export function traceIdOf(traceparent: string | null | undefined): string | undefined {
  return activeSpanTraceId() ?? traceIdOfTraceparent(traceparent);
}
