// The options a protected route takes, and their resolution (defaults, checks) once, when the route is created.
import type { IdempotencyStatusMap } from "../errors";
import { classifyResponseStatus, type ClassifyResponse } from "./classify-response";
import type { RouteResult } from "./http-response";
import { replayableHeaders } from "./stored-response";
import { warnOnce } from "./warn-once";

export type GetUserId<Req> = (req: Req) => string | Promise<string>;
export type GetOperation<Req> = (req: Req) => string;
export type GetBody<Req> = (req: Req) => unknown;
export type IsPermanentError = (err: unknown) => boolean;

/** What every style of every adapter accepts; `Req` is the framework's request (or Hono's context). */
export type IdempotencyRouteOptions<Req> = {
  /** The authenticated user the key belongs to. @default the framework's user id (`req.user.id`, `c.get("user").id`), else "anonymous" */
  getUserId?: GetUserId<Req>;
  /** Scopes keys to one operation. @default `"<METHOD> <route path>"`, e.g. "POST /payments/:id/refunds" */
  getOperation?: GetOperation<Req>;
  /** What the fingerprint covers: leave out fields that change between retries (timestamps, trace ids). @default the parsed body */
  getBody?: GetBody<Req>;
  /** Answer 400 IDEMPOTENCY_KEY_MISSING instead of running the route unprotected. @default false */
  requireKey?: boolean;
  /** Per-code status overrides, e.g. `{ REQUEST_IN_PROGRESS: 425 }`. */
  statusMap?: IdempotencyStatusMap;
  /** Allows the shared "anonymous" user without `getUserId` when NODE_ENV is "production". @default false */
  allowAnonymous?: boolean;
  /** Headers to replay besides Content-Type, Content-Encoding, Content-Language, Location, ETag, Link and Cache-Control. */
  replayHeaders?: readonly string[];
  /** Which responses are stored and which free or fail the key. @default classifyResponseStatus */
  classifyResponse?: ClassifyResponse;
};

/** Wrapper style sees the errors its `run` throws; capture style only sees responses, so it has no `isPermanentError`. */
export type WrapperRouteOptions<Req> = IdempotencyRouteOptions<Req> & {
  /** True for errors that can never succeed on retry: the key is marked FAILED. @default every error is transient */
  isPermanentError?: IsPermanentError;
  /** Runs `run` with the record in one database transaction (`handler.executeInTransaction`), handing it the transaction. @default false */
  transaction?: boolean | undefined;
};

/**
 * Wrapper style's `run(...request, signal)`; with `transaction: true`, also the transaction of the
 * store's client, for writes that commit with the idempotency record (see TRANSACTIONS.md).
 */
export type WrapperRun<Args extends unknown[], Tx> =
  | { transaction?: false | undefined; run: (...args: [...Args, signal: AbortSignal]) => RouteResult | Promise<RouteResult> }
  | { transaction: true; run: (...args: [...Args, signal: AbortSignal, tx: Tx]) => RouteResult | Promise<RouteResult> };

/** How an adapter reads its framework's defaults. */
export type FrameworkDefaults<Req> = {
  userIdOf: (req: Req) => unknown;
  operationOf: (req: Req) => string;
  bodyOf: (req: Req) => unknown;
};

export type ResolvedRouteOptions<Req> = {
  getUserId: GetUserId<Req>;
  getOperation: GetOperation<Req>;
  getBody: GetBody<Req>;
  requireKey: boolean;
  statusMap: IdempotencyStatusMap;
  replayHeaders: ReadonlySet<string>;
  classifyResponse: ClassifyResponse;
  isPermanentError: IsPermanentError;
};

/**
 * Fills in the defaults. In production, refuses a route with neither `getUserId` nor
 * `allowAnonymous`: a missing user would put every client in one key space, where one client's
 * key can replay another's payment confirmation.
 *
 * @example
 * const route = resolveRouteOptions({ requireKey: true }, expressDefaults);
 */
export function resolveRouteOptions<Req>(options: WrapperRouteOptions<Req>, framework: FrameworkDefaults<Req>): ResolvedRouteOptions<Req> {
  if (!options.getUserId && !options.allowAnonymous && process.env.NODE_ENV === "production") {
    throw new Error(
      "idempotency: a route needs `getUserId` in production (or `allowAnonymous: true`): without it, keys of requests with no authenticated user share one \"anonymous\" scope.",
    );
  }
  return {
    getUserId: options.getUserId ?? defaultUserId(framework, options.allowAnonymous === true),
    getOperation: options.getOperation ?? framework.operationOf,
    getBody: options.getBody ?? framework.bodyOf,
    requireKey: options.requireKey ?? false,
    statusMap: options.statusMap ?? {},
    replayHeaders: replayableHeaders(options.replayHeaders),
    classifyResponse: options.classifyResponse ?? classifyResponseStatus,
    isPermanentError: options.isPermanentError ?? (() => false),
  };
}

function defaultUserId<Req>(framework: FrameworkDefaults<Req>, allowAnonymous: boolean): GetUserId<Req> {
  return function frameworkUserId(req) {
    const id = framework.userIdOf(req);
    if ((typeof id === "string" && id !== "") || typeof id === "number") return String(id);
    if (!allowAnonymous) {
      warnOnce(
        'idempotency: a request had no authenticated user and its route has no `getUserId`, so its key is scoped to the shared "anonymous" user. Pass `getUserId` (or `allowAnonymous: true`).',
      );
    }
    return "anonymous";
  };
}
