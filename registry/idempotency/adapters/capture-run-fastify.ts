// Fastify: what one protected request hands the shared flow, and the run of a captured route (see fastify.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from "fastify";
import type { IdempotencyContext } from "../http/context";
import { wireBody, type HttpResponse, type Uncaptured } from "../http/http-response";
import { IDEMPOTENCY_KEY_HEADER, type HeaderValue } from "../http/key-header";
import { isThenable, type HttpVerdict, type Protect, type ProtectedRequest } from "../http/protect";
import { clientGoneSignal } from "../http/client-gone";

/**
 * What `protect` reads of one request: one object whose methods live on its class, rather than a
 * literal with closures made for every request.
 */
export class FastifyRequestView {
  readonly method: string;
  readonly url: string;
  readonly keyHeader: HeaderValue;
  readonly hasCredentials: boolean;
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  constructor(request: FastifyRequest, reply: FastifyReply) {
    this.request = request;
    this.reply = reply;
    this.method = request.method;
    this.url = request.url;
    this.keyHeader = request.headers[IDEMPOTENCY_KEY_HEADER];
    this.hasCredentials = request.headers.authorization !== undefined;
  }
  setContext(context: IdempotencyContext): void {
    this.request.idempotency = context;
  }
  signal(): AbortSignal {
    return clientGoneSignal(this.reply.raw);
  }
}

/** What onSend calls to let the response go. */
type HookDone = (err: null, payload: unknown) => void;

/** A request with the slot in which one plugin registration keeps its running route (declared on every request). */
export type WithSlot = FastifyRequest & Record<symbol, CaptureRun | undefined>;

/**
 * One request through the capture flow. The handler's promise settles with what Fastify should
 * see: the route's own value once it ran, else the verdict's response. Its response is captured in
 * onSend, an error it threw in onError (both find the run in the request's slot).
 */
export class CaptureRun extends FastifyRequestView implements ProtectedRequest {
  readonly app: FastifyInstance;
  readonly routeHandler: RouteHandlerMethod;
  /** The plugin registration's slot on the request, where its hooks find this run. */
  readonly slot: symbol;
  verdict: Promise<HttpVerdict> | undefined = undefined;
  thrown: unknown = undefined;
  /** Resolves `produce` with what the route sent; set once the route may run. */
  private answer: ((response: HttpResponse | Uncaptured) => void) | undefined = undefined;
  /** The route handed its reply back ("wait for what I sent"): settled once that is written. */
  private waiting = false;
  private written = false;
  private verdictGiven = false;
  /** onSend's callback and payload, held until the verdict is given. */
  private held: HookDone | undefined = undefined;
  private heldPayload: unknown = undefined;
  private settle!: (value: unknown) => void;
  private fail!: (error: unknown) => void;

  constructor(
    request: FastifyRequest,
    reply: FastifyReply,
    app: FastifyInstance,
    routeHandler: RouteHandlerMethod,
    slot: symbol,
  ) {
    super(request, reply);
    this.app = app;
    this.routeHandler = routeHandler;
    this.slot = slot;
  }

  start(protect: Protect<FastifyRequest>): Promise<unknown> {
    const handled = new Promise<unknown>((resolve, reject) => {
      this.settle = resolve;
      this.fail = reject;
    });
    this.verdict = protect(this.request, this);
    void this.verdict.then((verdict) => this.decided(verdict));
    return handled;
  }

  /** The verdict: the answer when the route did not run, else the moment onSend may let its response go. */
  private decided(verdict: HttpVerdict): void {
    this.verdictGiven = true;
    if (this.answer) return this.releaseHeld();
    if (verdict.kind === "error") return this.fail(verdict.error);
    if (verdict.kind !== "uncaptured") send(this.reply, verdict.response);
    this.settle(handedBack(this.reply));
  }

  produce(): Promise<HttpResponse | Uncaptured> {
    const response = new Promise<HttpResponse | Uncaptured>((resolve) => (this.answer = resolve));
    (this.request as WithSlot)[this.slot] = this;
    // Without a key, `protect` asks for the response before it returned the verdict onSend waits for.
    if (this.verdict) this.runRoute();
    else queueMicrotask(() => this.runRoute());
    return response;
  }

  thrownError(): unknown {
    return this.thrown;
  }

  capture(response: HttpResponse | undefined): void {
    this.answer?.(response ?? HIJACKED);
  }

  /**
   * onSend: lets the response go once the record is written (the verdict is given), before the
   * client can see it and retry. Held in two fields rather than a closure per request.
   */
  release(done: HookDone, payload: unknown): void {
    this.held = done;
    this.heldPayload = payload;
    if (this.verdictGiven) this.releaseHeld();
  }

  private releaseHeld(): void {
    const done = this.held;
    if (!done) return;
    this.held = undefined;
    done(null, this.heldPayload);
    this.written = true;
    if (this.waiting) this.settle(handedBack(this.reply));
  }

  /**
   * Runs the route and gives Fastify what it should see. Fastify sends a value an async route resolved
   * with, or nothing, unless the reply went out; while onSend holds the answer until the record is
   * written, it has not, so a route that called `reply.send()` and returned nothing would be sent twice
   * ("headers already sent"). Such a route, and one that returned `reply`, waits for what it sent: a
   * sync route that returned nothing (it sent, or sends later from a callback), or an async one whose
   * send reached our onSend, which it does at once unless an async onSend hook of the app runs before
   * ours. It waits here, for onSend, rather than through `reply`'s own `then` (end-of-stream listeners).
   */
  private runRoute(): void {
    let result: unknown;
    try {
      result = this.routeHandler.call(this.app, this.request, this.reply);
    } catch (err) {
      this.fail(err);
      return this.watchUnsent();
    }
    if (!isThenable(result)) {
      if (result === undefined || result === this.reply) this.wait();
      else this.settle(result);
      return this.watchUnsent();
    }
    result.then(
      (value) => {
        if (value === this.reply || (value === undefined && (this.request as WithSlot)[this.slot] !== this))
          this.wait();
        else this.settle(value);
        this.watchUnsent();
      },
      (err: unknown) => {
        this.fail(err);
        this.watchUnsent();
      },
    );
  }

  /**
   * A hijacked reply (or one written to `reply.raw` directly) skips onSend: once its response is
   * ended, free the key rather than hold it forever. Listened to only once the route returned without its
   * response reaching onSend (the usual route's has), rather than in an onResponse hook: with one,
   * Fastify times and listens to every response.
   */
  private watchUnsent(): void {
    if ((this.request as WithSlot)[this.slot] !== this) return;
    const raw = this.reply.raw;
    // Ended by the route already: its 'finish' may have gone by.
    if (raw.writableEnded) return this.unsent();
    const unsent = () => this.unsent();
    raw.on("finish", unsent);
    raw.on("error", unsent);
  }

  private unsent(): void {
    if ((this.request as WithSlot)[this.slot] === this) {
      (this.request as WithSlot)[this.slot] = undefined;
      this.capture(undefined);
    }
    if (this.waiting) this.settle(handedBack(this.reply));
  }

  private wait(): void {
    if (this.written || this.reply.sent) this.settle(handedBack(this.reply));
    else this.waiting = true;
  }
}

/**
 * What a handler whose response was sent gives Fastify: nothing once it is written, else the reply,
 * whose `then` waits for it (an async onSend hook of the app may still hold it).
 */
export function handedBack(reply: FastifyReply): FastifyReply | undefined {
  return reply.sent ? undefined : reply;
}

const HIJACKED: Uncaptured = { uncaptured: "the route sent a stream or hijacked the reply" };

export function send(reply: FastifyReply, response: HttpResponse): FastifyReply {
  return reply.code(response.status).headers(response.headers).send(wireBody(response.body, response.text));
}
