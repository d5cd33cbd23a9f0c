// The request's id: the one the logger block (or the framework) already gave it, else a fresh one.

/** The same rule as the logger block: short and plain, so a client cannot forge log lines through it. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:=+/-]{1,128}$/;

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
    if (typeof candidate === "string" && SAFE_REQUEST_ID.test(candidate)) return candidate;
  }
  return crypto.randomUUID();
}
