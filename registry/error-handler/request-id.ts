// A request's id: the caller's `x-request-id` (or one a framework gave) when it is safe to log, a fresh UUID otherwise.
// One source: the logger and error-handler blocks vendor identical copies.

/**
 * The header read on the way in and echoed on the way out.
 *
 * @example
 * await fetch(url, { headers: { [REQUEST_ID_HEADER]: getLoggerContext()?.requestId ?? "" } });
 */
export const REQUEST_ID_HEADER = "x-request-id";

/**
 * Options of the logger block's framework middlewares.
 *
 * @example
 * app.use(requestId({ header: "x-correlation-id", generate: () => `req_${ulid()}` }));
 */
export type RequestIdOptions = {
  /** Header to read and echo (any case). @default "x-request-id" */
  header?: string;
  /** Makes an id when the incoming one is missing or unsafe. @default randomRequestId (a random UUID) */
  generate?: (() => string) | undefined;
};

/**
 * Short and plain on purpose: the id lands in every log line, so a client must not be able to
 * inject newlines, quotes or kilobytes into them. Covers UUIDs, ULIDs, base64 and trace ids.
 */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:=+/-]{1,128}$/;

function isSafeRequestId(candidate: unknown): candidate is string {
  return typeof candidate === "string" && SAFE_REQUEST_ID.test(candidate);
}

/**
 * Returns `incoming` when it is a safe id, otherwise a generated one. Header values arrive as
 * `string | string[] | undefined`; a repeated header is never trusted.
 *
 * @example
 * resolveRequestId("req_01HZX");       // "req_01HZX"
 * resolveRequestId("a\nfake log line"); // "6f1c...-uuid"
 * resolveRequestId(undefined, { generate: () => `req_${ulid()}` });
 */
export function resolveRequestId(incoming: unknown, options: Pick<RequestIdOptions, "generate"> = {}): string {
  return isSafeRequestId(incoming) ? incoming : (options.generate ?? randomRequestId)();
}

/**
 * The first usable candidate, in the order given; a random UUID when none is. Numbers count
 * (pino-http's default ids are counters); an unsafe string, such as an `x-request-id` header with
 * a newline in it, does not.
 *
 * @example
 * pickRequestId(res.locals.requestId, req.id, req.headers["x-request-id"]); // "req_01HZX..."
 */
export function pickRequestId(...candidates: unknown[]): string {
  for (const candidate of candidates) {
    if (typeof candidate === "number" && Number.isFinite(candidate)) return String(candidate);
    if (isSafeRequestId(candidate)) return candidate;
  }
  return randomRequestId();
}

/**
 * A random (version 4) UUID: Web Crypto's `randomUUID`, so any runtime.
 *
 * @example
 * randomRequestId(); // "3b241101-e2bb-4255-8caf-4136c566a962"
 */
export function randomRequestId(): string {
  return crypto.randomUUID();
}
