// The request flow every adapter shares: decide, run the route once per key, and say what to send.
import { randomUUID } from "node:crypto";
import { IdempotencyError, isIdempotencyError } from "../errors";
import { hashPayload, sha256Hex } from "../fingerprint";
import type { IdempotencyHandler } from "../handler";
import type { TransactionContext } from "../operation-context";
import type { IdempotencyContext } from "./context";
import { idempotencyErrorResponse, routeError } from "./error-response";
import { isUncaptured, type HttpResponse, type Uncaptured } from "./http-response";
import { parseIdempotencyKey, type HeaderValue } from "./key-header";
import { requestFingerprintJson } from "./request-fingerprint";
import { checkTransaction } from "./route-transaction";
import {
  resolveRouteOptions,
  type FrameworkDefaults,
  type RouteContext,
  type WrapperRouteOptions,
} from "./route-options";
import { isStoredResponse, replayResponse, toStoredResponse, type StoredResponse } from "./stored-response";
import { UnkeptAnswer } from "../unkept-answer";
import { warnOnce } from "./warn-once";

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
   * `ctx.signal` is made only when read: capture style never needs it. A route that streamed its
   * response resolves `{ uncaptured: reason }`: it went out as it is and cannot be recorded.
   */
  produce: (ctx: RouteContext) => Promise<HttpResponse | Uncaptured>;
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
 * The verdict on one request, a value each adapter maps to its framework; `outcome` is what the
 * request's IdempotencyContext says of it, set from here once.
 * - `answered`: the route ran in this request (or without a key); send its own response
 * - `replayed`: send the recorded response; the route did not run
 * - `refused`: an idempotency decision (bad or missing key, conflict, in progress, failed key, store down); send its response
 * - `uncaptured`: the route ran and streamed its response out; nothing is left to send
 * - `error`: pass `error` to the framework's error handling (the route threw, or `errors: "throw"`)
 */
export type HttpVerdict =
  | { kind: "answered"; outcome: "executed" | "failed" | "skipped"; response: HttpResponse }
  | { kind: "replayed"; outcome: "replayed"; response: HttpResponse }
  | { kind: "refused"; outcome: "rejected" | "failed"; response: HttpResponse }
  | { kind: "uncaptured"; outcome: "uncaptured" | "skipped" }
  | { kind: "error"; outcome: "pending" | "skipped" | "failed" | "rejected"; error: unknown };

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

/**
 * Resolves a route's options once and returns the per-request flow. Never rejects: every request
 * ends in a verdict, so each adapter answers it the way its framework expects. `capture` names a
 * capture-style middleware, which cannot hand its route a transaction: with `transaction: true` it
 * throws here, at start-up, as it does for a handler that cannot transact.
 *
 * @example
 * const protect = protectRoute(handler, { requireKey: true }, expressDefaults);
 * const verdict = await protect(req, { method: req.method, url: req.originalUrl, keyHeader, hasCredentials, setContext, produce });
 */
export function protectRoute<Req>(
  handler: IdempotencyHandler<unknown>,
  options: WrapperRouteOptions<Req>,
  framework: FrameworkDefaults<Req>,
  capture?: string,
) {
  // A transactional route always has a key: a request without one would run with neither record nor transaction.
  const inTransaction = checkTransaction(options, handler, capture);
  const route = resolveRouteOptions(inTransaction ? { ...options, requireKey: true } : options, framework);
  // How `execute` settles what the route throws; what it answers but must not be kept comes back as an UnkeptAnswer.
  const executeOptions = { isPermanentError: route.isPermanentError, waitMs: route.waitMs };
  // Only a route whose duplicates wait needs the client's signal: the others make no object per request for it.
  const waits = (route.waitMs ?? handler.waitMs) > 0;
  const replay = (stored: StoredResponse) => replayResponse(stored, route.replayHeaders, route.replayedHeader);

  return protect;

  /**
   * The verdict on one request. The context is the request's from the start, gets what is known as
   * it is learnt, `executing` while the route runs, and the verdict's outcome when it is given
   * (through `settle`, at every return: one async frame per request, not a second around this one).
   */
  async function protect(req: Req, request: ProtectedRequest): Promise<HttpVerdict> {
    const context: IdempotencyContext = {
      key: undefined,
      userId: undefined,
      operation: undefined,
      requestHash: undefined,
      outcome: "pending",
    };
    request.setContext(context);
    let key: string | undefined;
    try {
      context.operation = route.getOperation(req);
      // Awaited only when it is a promise: a lookup that answers at once costs no microtask hop.
      const userId = route.getUserId(req, request.hasCredentials);
      context.userId = typeof userId === "string" ? userId : await userId;
      key = parseIdempotencyKey(request.keyHeader);
      if (key === undefined && route.requireKey)
        return settle(
          context,
          refusal(
            new IdempotencyError("IDEMPOTENCY_KEY_MISSING", "This route requires an Idempotency-Key header."),
            false,
          ),
        );
    } catch (err) {
      return settle(
        context,
        isIdempotencyError(err) ? refusal(err, false) : { kind: "error", outcome: "pending", error: err },
      );
    }
    if (key === undefined) return settle(context, await unprotected(request));
    context.key = key;
    // What the route answered, once it ran: a first run sends it, never the stored copy.
    let answer: HttpResponse | undefined;
    try {
      // Hashed here rather than by `execute`, so the context has the hash even when execute rejects.
      // Each callback's answer is awaited only when it is a promise: a plain value costs no microtask hop.
      if (route.getFingerprint) {
        let input = route.getFingerprint(req);
        if (isThenable(input)) input = await input;
        context.requestHash = hashPayload(input);
      } else {
        let body = route.getBody(req);
        if (isThenable(body)) body = await body;
        context.requestHash = sha256Hex(requestFingerprintJson(request.method, request.url, body));
      }
      const scope = { operation: context.operation, userId: context.userId, key, requestHash: context.requestHash };
      const operation = async (ctx: RouteContext | TransactionContext<unknown>) => {
        context.outcome = "executing";
        answer = undefined;
        // A transactional route's `run` takes the TransactionContext (WrapperRun types it): passed on as it is.
        const produced = await request.produce(ctx as RouteContext);
        const unkept = unkeptAnswer(produced, request.thrownError?.());
        if (unkept) return unkept;
        answer = produced as HttpResponse;
        return toStoredResponse(answer, route.replayHeaders);
      };
      const result = inTransaction
        ? await handler.executeInTransaction<Settled>(scope, operation, executeOptions)
        : await handler.execute<Settled>(
            scope,
            operation,
            waits && request.signal ? { ...executeOptions, signal: request.signal() } : executeOptions,
          );
      if (result.replayed)
        return settle(context, {
          kind: "replayed",
          outcome: "replayed",
          response: replay(result.response as StoredResponse),
        });
      // A first run sends what the route produced: `result.response` would parse the stored copy, so it is read
      // only when the route's last run (`answer` is reset at each) returned no response to record.
      if (answer === undefined && result.response instanceof UnkeptAnswer)
        return settle(context, handedBack(context, result.response.answer));
      return settle(context, { kind: "answered", outcome: "executed", response: answer as HttpResponse });
    } catch (err) {
      const ran = context.outcome === "executing";
      if (isIdempotencyError(err)) return settle(context, refusal(err, ran));
      return settle(context, { kind: "error", outcome: ran ? "failed" : "pending", error: err });
    }
  }

  /** The request's verdict, its outcome written into its context. */
  function settle(context: IdempotencyContext, verdict: HttpVerdict): HttpVerdict {
    context.outcome = verdict.outcome;
    return verdict;
  }

  /** The verdict on an answer the key did not keep, once `execute` settled the key and handed it back. */
  function handedBack(context: IdempotencyContext, answer: HttpResponse | Uncaptured): HttpVerdict {
    if (!isUncaptured(answer)) return { kind: "answered", outcome: "failed", response: answer };
    warnOnce(
      `idempotency: ${context.operation} sent a response that cannot be recorded (${answer.uncaptured}); its keys are freed instead of replayed. Use wrapper style for this route.`,
    );
    return { kind: "uncaptured", outcome: "uncaptured" };
  }

  /** Without a key the route runs unprotected: its answer goes out as it is. */
  async function unprotected(request: ProtectedRequest): Promise<HttpVerdict> {
    let answer: HttpResponse | Uncaptured;
    try {
      answer = await request.produce(UNPROTECTED);
    } catch (err) {
      return { kind: "error", outcome: "skipped", error: err };
    }
    return isUncaptured(answer)
      ? { kind: "uncaptured", outcome: "skipped" }
      : { kind: "answered", outcome: "skipped", response: answer };
  }

  /**
   * The route's answer when the key must not keep it, classified once here: a stream (the key is
   * freed), or an error status (freed, or failed for good, keeping the response so retries learn
   * its status or get it replayed with `replayFailures`). Undefined for an answer to record.
   */
  function unkeptAnswer(answer: HttpResponse | Uncaptured, thrown: unknown): Settled | undefined {
    if (isUncaptured(answer))
      return new UnkeptAnswer(answer, "uncaptured", { name: "UncapturedResponse", message: answer.uncaptured });
    const verdict =
      thrown !== undefined && route.isPermanentError(thrown) ? "permanent" : route.classifyResponse(answer.status);
    if (verdict === "success") return undefined;
    // The message is what a log line shows of it: the status and the start of the body, as text.
    const reason = {
      name: "ErrorResponse",
      message: `The route answered ${answer.status}: ${answer.body.toString("utf8", 0, 200)}`,
    };
    return new UnkeptAnswer(answer, verdict, reason, toStoredResponse(answer, route.replayHeaders));
  }

  /** An idempotency decision: sent, or handed to the framework with `errors: "throw"`; a failed key's own response with `replayFailures`. */
  function refusal(err: IdempotencyError, ran: boolean): HttpVerdict {
    const outcome = ran ? "failed" : "rejected";
    const failed = !ran && err.code === "REQUEST_FAILED" && isStoredResponse(err.response) ? err.response : undefined;
    if (failed && route.replayFailures) return { kind: "replayed", outcome: "replayed", response: replay(failed) };
    if (route.errors === "throw") return { kind: "error", outcome, error: routeError(err, route.statusMap) };
    return {
      kind: "refused",
      outcome,
      response: idempotencyErrorResponse(err, route.statusMap, failed && { originalStatus: failed.status }),
    };
  }
}

/** What `execute` resolves for one request: the stored response, or the answer the key did not keep. */
type Settled = StoredResponse | UnkeptAnswer<HttpResponse | Uncaptured>;

/** A promise, or another object `await` would wait for. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

/** The per-request flow `protectRoute` returns. */
export type Protect<Req> = ReturnType<typeof protectRoute<Req>>;
