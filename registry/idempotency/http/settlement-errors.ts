// The two errors the HTTP flow hands `execute` for a route that answered but must not be recorded:
// the core settles a key without a result only from a rejection (freed, or failed for good).
import type { HttpResponse } from "./http-response";

/**
 * A route that streamed its response (a piped file, SSE, a chunked body): it went out as it is,
 * unrecorded, and its key was freed. The log line "the answer could not be captured, key released"
 * carries it; no adapter throws it at a route or a client.
 */
export class UncapturableResponseError extends Error {
  override readonly name = "UncapturableResponseError";
}

/**
 * A response with an error status, as the failure log line names it ("The route answered 402: ...").
 * `permanent` marks the key FAILED (and keeps the response for `replayFailures`); otherwise it is freed.
 */
export class ErrorResponse extends Error {
  override readonly name = "ErrorResponse";
  readonly response: HttpResponse;
  readonly permanent: boolean;

  constructor(response: HttpResponse, permanent: boolean) {
    // The message is what a log line shows of it: the status and the start of the body, as text.
    super(`The route answered ${response.status}: ${response.body.toString("utf8", 0, 200)}`);
    this.response = response;
    this.permanent = permanent;
  }
}
