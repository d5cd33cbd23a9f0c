// The request flow every adapter shares: decide, run the route at most once, and say what to send.
import { IdempotencyError, isIdempotencyError } from "../errors";
import { hashPayload } from "../fingerprint";
import type { IdempotencyHandler } from "../handler";
import type { IdempotencyContext } from "./context";
import { idempotencyErrorResponse } from "./error-response";
import type { HttpResponse } from "./http-response";
import { parseIdempotencyKey, type HeaderValue } from "./key-header";
import { resolveRouteOptions, type FrameworkDefaults, type WrapperRouteOptions } from "./route-options";
import { fromStoredResponse, toStoredResponse, type StoredResponse } from "./stored-response";
import { warnOnce } from "./warn-once";

/** Thrown by an adapter's capture when the route streams its response: it goes out as it is, unrecorded. */
export class UncapturableResponseError extends Error {
  override readonly name = "UncapturableResponseError";
}

/** What one request hands over: its key header, where its context lives, and how to run the route once. */
export type ProtectedRequest = {
  keyHeader: HeaderValue;
  setContext: (context: IdempotencyContext) => void;
  /** Runs the route and resolves with its response (wrapper: serializes `run`'s result; capture: records what it sends). `tx`: with `transaction: true`. */
  produce: (signal: AbortSignal, tx?: unknown) => Promise<HttpResponse>;
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

/** Carries an error response out of `execute`, so the key is freed or failed but the client still gets it. */
class UnstoredResponse extends Error {
  readonly response: HttpResponse;
  readonly permanent: boolean;

  constructor(
    response: HttpResponse,
    permanent: boolean,
  ) {
    super(`The route answered ${response.status}; error responses are never stored for replay.`);
    this.response = response;
    this.permanent = permanent;
  }
}

/**
 * Resolves a route's options once and returns the per-request flow. Never rejects: every error
 * comes back as an outcome, so each adapter answers it the way its framework expects.
 *
 * @example
 * const protect = protectRoute(handler, { requireKey: true }, expressDefaults);
 * const outcome = await protect(req, { keyHeader: req.headers["idempotency-key"], setContext, produce });
 */
export function protectRoute<Req>(handler: IdempotencyHandler, options: WrapperRouteOptions<Req>, framework: FrameworkDefaults<Req>) {
  const route = resolveRouteOptions(options, framework);
  const isPermanentError = (err: unknown) => (err instanceof UnstoredResponse ? err.permanent : route.isPermanentError(err));
  const isUnrecordable = (err: unknown) => err instanceof UncapturableResponseError;

  return async function protect(req: Req, { keyHeader, setContext, produce }: ProtectedRequest): Promise<ProtectOutcome> {
    const context: IdempotencyContext = { key: undefined, userId: undefined, operation: undefined, requestHash: undefined, outcome: "pending" };
    setContext(context);
    let ran = false;
    try {
      context.operation = route.getOperation(req);
      context.userId = await route.getUserId(req);
      const key = parseIdempotencyKey(keyHeader);
      if (key === undefined) {
        if (route.requireKey) throw new IdempotencyError("IDEMPOTENCY_KEY_MISSING", "This route requires an Idempotency-Key header.");
        context.outcome = "skipped";
        ran = true;
        return { kind: "ran", response: await produce(new AbortController().signal) };
      }
      context.key = key;
      // Hashed here rather than by `execute`, so the context has the hash even when execute rejects.
      context.requestHash = hashPayload(await route.getBody(req));
      let produced: HttpResponse | undefined;
      const scope = { operation: context.operation, userId: context.userId, key, requestHash: context.requestHash };
      const operation = async (signal: AbortSignal, tx?: unknown) => {
        ran = true;
        context.outcome = "executing";
        produced = await produce(signal, tx);
        const verdict = route.classifyResponse(produced.status);
        if (verdict !== "success") throw new UnstoredResponse(produced, verdict === "permanent");
        return toStoredResponse(produced, route.replayHeaders);
      };
      const { response, replayed } = options.transaction
        ? await handler.executeInTransaction<StoredResponse>(scope, (tx, signal) => operation(signal, tx), { isPermanentError })
        : await handler.execute<StoredResponse>(scope, operation, { isPermanentError, isUnrecordable });
      context.outcome = replayed ? "replayed" : "executed";
      return replayed ? { kind: "send", response: fromStoredResponse(response) } : { kind: "ran", response: produced };
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
    if (err instanceof UnstoredResponse) return { kind: "ran", response: err.response };
    if (isIdempotencyError(err)) {
      if (!ran) context.outcome = "rejected";
      return { kind: "send", response: idempotencyErrorResponse(err, route.statusMap) };
    }
    return { kind: "error", error: err };
  }
}

/** The per-request flow `protectRoute` returns. */
export type Protect<Req> = ReturnType<typeof protectRoute<Req>>;
