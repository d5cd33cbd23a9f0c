// Errors about another service's answer (an HTTP client's, a database driver's): never an answer for our client.

/**
 * True when the error reports what a *downstream* said: an HTTP client's error about a response it
 * got, or a database driver's error. Whatever status or message it carries belongs to that
 * exchange: a 401 from the payment provider means our credentials are wrong, not the client's.
 * Checked before anything the error says about itself, so such an error is a 500 even with an
 * `expose` flag or a code from the table.
 *
 * @example
 * isDownstreamError(axiosError); // true: isAxiosError, response.status
 * isDownstreamError(Object.assign(new Error("duplicate key"), { code: "23505", severity: "ERROR" })); // true
 */
export function isDownstreamError(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const shape = err as Record<string, unknown>;
  return isHttpClientError(shape) || isDriverError(shape);
}

// got, undici (UND_ERR_*), node:http's client (ERR_HTTP_*), ofetch/ky name their errors so.
const CLIENT_CODE = /^(UND_ERR_|ERR_NON_2XX_3XX_RESPONSE$|ERR_HTTP_|ERR_BAD_(REQUEST|RESPONSE)$|ERR_FR_)/;
const CLIENT_NAME =
  /^(AxiosError|HTTPError|FetchError|ResponseError|ResponseStatusCodeError|GaxiosError|RequestError)$/;

function isHttpClientError(shape: Record<string, unknown>): boolean {
  if (shape.isAxiosError === true) return true;
  // axios, got, ky, ofetch, superagent and gaxios keep the downstream's response on the error.
  const response = shape.response;
  if (typeof response === "object" && response !== null) {
    const { status, statusCode } = response as { status?: unknown; statusCode?: unknown };
    if (typeof status === "number" || typeof statusCode === "number") return true;
  }
  if (typeof shape.code === "string" && CLIENT_CODE.test(shape.code)) return true;
  if (typeof shape.name === "string" && CLIENT_NAME.test(shape.name)) return true;
  // The AWS SDK (v3) and the SDKs generated like it keep the downstream's status in `$metadata`.
  return typeof shape.$metadata === "object" && shape.$metadata !== null;
}

// SQLSTATE (PostgreSQL, CockroachDB, MySQL's sqlState): five characters, digits among them; Prisma's P2002.
const SQLSTATE = /^(?=.*\d)[0-9A-Z]{5}$/;
const PRISMA_CODE = /^P\d{4}$/;

function isDriverError(shape: Record<string, unknown>): boolean {
  const { code } = shape;
  // mysql's errno, MongoDB's 11000, SQL Server's `number`: a driver's numeric code.
  if (typeof code === "number") return true;
  if (typeof code === "string" && (SQLSTATE.test(code) || PRISMA_CODE.test(code))) return true;
  // pg's DatabaseError (`severity`, `routine`), mysql2 (`sqlState`, `sqlMessage`), Prisma (`clientVersion`).
  return ["severity", "routine", "sqlState", "sqlMessage", "clientVersion"].some(
    (field) => typeof shape[field] === "string",
  );
}
