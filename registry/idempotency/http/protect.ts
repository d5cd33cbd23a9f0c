// The request flow every adapter shares: decide, run the route once per key, and say what to send.
import { randomUUID } from "node:crypto";
import { IdempotencyError, isIdempotencyError } from "../errors";
import { hashPayload } from "../fingerprint";
import type { IdempotencyHandler } from "../handler";
import type { TransactionContext } from "../operation-context";
import type { IdempotencyContext } from "./context";
import { idempotencyErrorResponse, routeError } from "./error-response";
import type { HttpResponse } from "./http-response";
import { parseIdempotencyKey, type HeaderValue } from "./key-header";
import { requestFingerprint } from "./request-fingerprint";
import { checkTransaction } from "./route-transaction";
import { resolveRouteOptions, type FrameworkDefaults, type RouteContext, type WrapperRouteOptions } from "./route-options";
import { isStoredResponse, replayResponse, toStoredResponse, type StoredResponse } from "./stored-response";
import { warnOnce } from "./warn-once";

/** Thrown by an adapter's capture when the route streams its response: it goes out as it is, uncaptured. */
export class UncapturableResponseError extends Error {
  override readonly name = "UncapturableResponseError";
}

/** What one request hands over: what identifies it, where its context lives, and how to run the route once. */
export type ProtectedRequest = {
  /** The request method, e.g. "POST". */
  method: string;
  /** The request target as received, path and query: `/accounts/A/withdrawals?to=bob` (Express `req.originalUrl`). */
  url: string;
  keyHeader: HeaderValue;
  /** True when the request carries an Authorization header: then it must have a user, never the anonymous scope. */
  hasCredentials: boolean;
  setContext: (context: IdempotencyContext) => void;
  /**
   * Runs the route and resolves with its response (wrapper: serializes `run`'s result; capture:
   * records what it sends). `ctx` is what `run` gets last; in transactional mode it also holds `tx`.
   * `ctx.signal` is made only when read: capture style never needs it.
   */
  produce: (ctx: RouteContext) => Promise<HttpResponse>;
  /**
   * Capture style: the error the route threw, when the framework turned it into the response
   * (Hono's `c.error`, Fastify's onError), so `isPermanentError` can fail the key whatever its status.
   */
  thrownError?: (() => unknown) | undefined;
  /**
   * Makes a signal that aborts when the client goes away, so a duplicate waiting for the first
   * request (`waitMs`) stops polling. Called only on a route whose duplicates wait.
   */
  signal?: (() => AbortSignal) | undefined;
};

/**
 * What the adapter does next:
 * - `ran`: the route ran in this request; send its own response (`undefined`: it already streamed out)
 * - `send`: send this response instead (a replay, or an idempotency error)
 * - `error`: pass this error to the framework's error handling
 */
export type ProtectOutcome =
  | { kind: "ran"; response: HttpResponse | undefined }
  | { kind: "send"; response: HttpResponse }
  | { kind: "error"; error: unknown };

/**
 * The context of a route that runs without a key: no scope, a signal that never aborts (made only
 * if read), and steps that record nothing. Without a key no retry can be recognised, so each step
 * gets a downstream key of its own.
 */
const UNPROTECTED: RouteContext = {
  get signal() {
    return new AbortController().signal;
  },
  key: undefined,
  step: <T>(_name: string, fn: (stepKey: string) => Promise<T> | T): Promise<T> =>
    new Promise<T>((resolve) => resolve(fn(`idem_${randomUUID()}`))),
};

/** Carries an error response out of `execute`, so the key is freed or failed but the client still gets it. */
class ErrorResponse extends Error {
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

/**
 * Resolves a route's options once and returns the per-request flow. Never rejects: every error
 * comes back as an outcome, so each adapter answers it the way its framework expects. `capture`
 * names a capture-style middleware, which cannot hand its route a transaction: with
 * `transaction: true` it throws here, at start-up, as it does for a handler that cannot transact.
 *
 * @example
 * const protect = protectRoute(handler, { requireKey: true }, expressDefaults);
 * const outcome = await protect(req, { method: req.method, url: req.originalUrl, keyHeader, hasCredentials, setContext, produce });
 */
export function protectRoute<Req>(handler: IdempotencyHandler<unknown>, options: WrapperRouteOptions<Req>, framework: FrameworkDefaults<Req>, capture?: string) {
  // A transactional route always has a key: a request without one would run with neither record nor transaction.
  const inTransaction = checkTransaction(options, handler, capture);
  const route = resolveRouteOptions(inTransaction ? { ...options, requireKey: true } : options, framework);
  const executeOptions = {
    isPermanentError: (err: unknown) => (err instanceof ErrorResponse ? err.permanent : route.isPermanentError(err)),
    isUncapturable: (err: unknown) => err instanceof UncapturableResponseError,
    // Kept with the failed key, so retries learn its status (or get it replayed, with `replayFailures`).
    failureResponse: (err: unknown) => (err instanceof ErrorResponse ? toStoredResponse(err.response, route.replayHeaders) : undefined),
    waitMs: route.waitMs,
  };
  // Only a route whose duplicates wait needs the client's signal: the others make no object per request for it.
  const waits = (route.waitMs ?? handler.waitMs) > 0;
  const replay = (stored: StoredResponse) => replayResponse(stored, route.replayHeaders, route.replayedHeader);

  return async function protect(req: Req, request: ProtectedRequest): Promise<ProtectOutcome> {
    const { keyHeader, setContext, produce } = request;
    const context: IdempotencyContext = { key: undefined, userId: undefined, operation: undefined, requestHash: undefined, outcome: "pending" };
    setContext(context);
    let ran = false;
    try {
      context.operation = route.getOperation(req);
      context.userId = await route.getUserId(req, request.hasCredentials);
      const key = parseIdempotencyKey(keyHeader);
      if (key === undefined) {
        if (route.requireKey) throw new IdempotencyError("IDEMPOTENCY_KEY_MISSING", "This route requires an Idempotency-Key header.");
        context.outcome = "skipped";
        ran = true;
        return { kind: "ran", response: await produce(UNPROTECTED) };
      }
      context.key = key;
      // Hashed here rather than by `execute`, so the context has the hash even when execute rejects.
      context.requestHash = hashPayload(
        route.getFingerprint ? await route.getFingerprint(req) : requestFingerprint(request.method, request.url, await route.getBody(req)),
      );
      let produced: HttpResponse | undefined;
      const scope = { operation: context.operation, userId: context.userId, key, requestHash: context.requestHash };
      const operation = async (ctx: RouteContext | TransactionContext<unknown>) => {
        ran = true;
        context.outcome = "executing";
        // A transactional route's `run` takes the TransactionContext (WrapperRun types it): passed on as it is.
        produced = await produce(ctx as RouteContext);
        const thrown = request.thrownError?.();
        const verdict = thrown !== undefined && route.isPermanentError(thrown) ? "permanent" : route.classifyResponse(produced.status);
        if (verdict !== "success") throw new ErrorResponse(produced, verdict === "permanent");
        return toStoredResponse(produced, route.replayHeaders);
      };
      const result = inTransaction
        ? await handler.executeInTransaction<StoredResponse>(scope, operation, executeOptions)
        : await handler.execute<StoredResponse>(scope, operation, waits && request.signal ? { ...executeOptions, signal: request.signal() } : executeOptions);
      // `result.response` is read only for a replay: a first run sends what the route produced, never a parsed copy.
      context.outcome = result.replayed ? "replayed" : "executed";
      return result.replayed ? { kind: "send", response: replay(result.response) } : { kind: "ran", response: produced };
    } catch (err) {
      return outcomeOfError(context, ran, err);
    }
  };

  /** Who answers a request that did not end with a stored or replayed response. */
  function outcomeOfError(context: IdempotencyContext, ran: boolean, err: unknown): ProtectOutcome {
    const unprotected = context.outcome === "skipped";
    if (err instanceof UncapturableResponseError) {
      if (!unprotected) {
        context.outcome = "uncaptured";
        warnOnce(`idempotency: ${context.operation} sent a response that cannot be recorded (${err.message}); its keys are freed instead of replayed. Use wrapper style for this route.`);
      }
      return { kind: "ran", response: undefined };
    }
    if (ran && !unprotected) context.outcome = "failed";
    if (err instanceof ErrorResponse) return { kind: "ran", response: err.response };
    if (isIdempotencyError(err)) {
      if (!ran) context.outcome = "rejected";
      const failed = !ran && err.code === "REQUEST_FAILED" && isStoredResponse(err.response) ? err.response : undefined;
      if (failed && route.replayFailures) {
        context.outcome = "replayed";
        return { kind: "send", response: replay(failed) };
      }
      if (route.errors === "throw") return { kind: "error", error: routeError(err, route.statusMap) };
      return { kind: "send", response: idempotencyErrorResponse(err, route.statusMap, failed && { originalStatus: failed.status }) };
    }
    return { kind: "error", error: err };
  }
}

/** The per-request flow `protectRoute` returns. */
export type Protect<Req> = ReturnType<typeof protectRoute<Req>>;
