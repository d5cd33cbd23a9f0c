// The options a protected route takes, and their resolution (defaults, checks) once, when the route is created.
import type { IdempotencyStatusMap } from "../errors";
import { classifyResponseStatus, type ClassifyResponse } from "./classify-response";
import type { OperationContext, TransactionContext } from "../operation-context";
import type { IdempotencyScope } from "../types";
import type { RouteResult } from "./http-response";
import { replayableHeaders } from "./stored-response";
import { frameworkUserId, IdempotencySetupError, routeUserId, type UserLookup } from "./user-id";
import { CONSUMER_OPERATION_PREFIX } from "../consume";
import { checkWaitMs } from "../wait-for-record";

export type GetUserId<Req> = (req: Req) => string | Promise<string>;
export type GetOperation<Req> = (req: Req) => string;
export type GetBody<Req> = (req: Req) => unknown;
export type GetFingerprint<Req> = (req: Req) => unknown;
export type IsPermanentError = (err: unknown) => boolean;

/** What every style of every adapter accepts; `Req` is the framework's request (or Hono's context). */
export type IdempotencyRouteOptions<Req> = {
  /** The authenticated user the key belongs to. @default the framework's user id (`req.user.id`, `c.get("user").id`), else the anonymous scope */
  getUserId?: GetUserId<Req>;
  /**
   * Scopes keys to one operation, and labels metrics: keep it free of concrete path segments (ids),
   * or label sets grow without bound. @default `"<METHOD> <route path template>"`, e.g. "POST /payments/:id/refunds"
   */
  getOperation?: GetOperation<Req>;
  /** The body part of the fingerprint: leave out fields that change between retries (timestamps, trace ids). @default the parsed body */
  getBody?: GetBody<Req>;
  /**
   * Replaces the whole fingerprint input (method, concrete path, query and `getBody`): two requests
   * under one key are the same request exactly when these values are equal (as canonical JSON).
   */
  getFingerprint?: GetFingerprint<Req>;
  /** True for a thrown error that can never succeed on retry: the key is marked FAILED. @default every thrown error is transient */
  isPermanentError?: IsPermanentError;
  /** Answer 400 IDEMPOTENCY_KEY_MISSING instead of running the route unprotected. @default false */
  requireKey?: boolean;
  /** Per-code status overrides, e.g. `{ KEY_REUSED_WITH_DIFFERENT_REQUEST: 422 }`. */
  statusMap?: IdempotencyStatusMap;
  /** Allows the shared anonymous scope without `getUserId` when NODE_ENV is "production". @default false */
  allowAnonymous?: boolean;
  /** Headers to replay besides Content-Type, Content-Encoding, Content-Language, Location, ETag, Link and Cache-Control. */
  replayHeaders?: readonly string[];
  /** Which responses are stored and which free or fail the key. @default classifyResponseStatus */
  classifyResponse?: ClassifyResponse;
  /**
   * Retries of a permanently failed key get the failed response itself, byte for byte (as Stripe
   * and the IETF draft do), instead of 409 REQUEST_FAILED naming its status. @default false
   */
  replayFailures?: boolean;
  /** The header that marks a replay (value `true`); `false` sends none. @default "Idempotent-Replayed" */
  replayedHeader?: string | false;
  /**
   * Who answers this route's IdempotencyErrors (409 KEY_REUSED_WITH_DIFFERENT_REQUEST, 409
   * REQUEST_IN_PROGRESS, 400 IDEMPOTENCY_KEY_MISSING, ...). `"answer"`: the adapter sends
   * `{ "error": { code, message } }` itself. `"throw"`: the adapter hands the error to the
   * framework's error handling (Express `next(err)`, Koa/Hono/Fastify/NestJS throw, fetch rejects),
   * e.g. to the error-handler block; the error carries `code`, `status` (with `statusMap` applied)
   * and `retryAfterSeconds`. Replays, and failed responses with `replayFailures`, are still sent. @default "answer"
   */
  errors?: RouteErrors;
  /**
   * How long a duplicate that arrives while the first request with its key still runs waits for
   * it (then replays its response) before answering 409 REQUEST_IN_PROGRESS; at most 300_000.
   * For clients with short retry loops. Not with `transaction: true`, whose duplicates wait on the
   * record's row lock instead. @default the handler's `waitMs` (0: answer at once)
   */
  waitMs?: number;
};

export type RouteErrors = "answer" | "throw";

/**
 * What the shared flow takes: both styles' options, and `transaction`, which only a style that hands
 * the route its context can keep (see `checkTransaction`).
 */
export type WrapperRouteOptions<Req> = IdempotencyRouteOptions<Req> & {
  /**
   * Runs the route with the record in one database transaction (`handler.executeInTransaction`),
   * handing it the transaction as `ctx.tx`; implies `requireKey`. @default false
   */
  transaction?: boolean | undefined;
};

/**
 * True when `Tx` is a transaction a route can be handed: a handler on a store without one (MemoryStore,
 * RedisStore, a PostgresStore on a bare Pool) has `Tx` never or unknown, and `transaction: true` does
 * not type-check with it.
 */
export type CanTransact<Tx> = [Tx] extends [never] ? false : unknown extends Tx ? false : true;

/**
 * What a route gets last, after what its framework hands it: `ctx.signal` (made on first read)
 * aborts if another execution takes the key over; `ctx.key` is the request's scope, undefined when
 * the request had no Idempotency-Key and the route ran unprotected.
 */
export type RouteContext = Omit<OperationContext, "key"> & { readonly key: IdempotencyScope | undefined };

/**
 * Wrapper style's `run(...request, ctx)`; with `transaction: true`, `ctx.tx` is the transaction of
 * the store's client, for writes that commit with the idempotency record (see TRANSACTIONS.md).
 */
export type WrapperRun<Args extends unknown[], Tx> =
  | {
      transaction?: false | undefined;
      run: (...args: [...Args, ctx: RouteContext]) => RouteResult | Promise<RouteResult>;
    }
  | (CanTransact<Tx> extends true
      ? {
          transaction: true;
          run: (...args: [...Args, ctx: TransactionContext<Tx>]) => RouteResult | Promise<RouteResult>;
        }
      : never);

/** How an adapter reads its framework's defaults. */
export type FrameworkDefaults<Req> = {
  userIdOf: (req: Req) => unknown;
  /** The route's template, never a concrete path: throw an IdempotencySetupError where it cannot be seen. */
  operationOf: (req: Req) => string;
  bodyOf: (req: Req) => unknown;
};

export type ResolvedRouteOptions<Req> = {
  getUserId: UserLookup<Req>;
  getOperation: GetOperation<Req>;
  getBody: GetBody<Req>;
  getFingerprint: GetFingerprint<Req> | undefined;
  requireKey: boolean;
  statusMap: IdempotencyStatusMap;
  replayHeaders: ReadonlySet<string>;
  classifyResponse: ClassifyResponse;
  isPermanentError: IsPermanentError;
  replayFailures: boolean;
  /** Lower-case, or undefined when replays are not marked. */
  replayedHeader: string | undefined;
  errors: RouteErrors;
  /** Undefined: the handler's. */
  waitMs: number | undefined;
};

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Fills in the defaults. In production, refuses a route with neither `getUserId` nor
 * `allowAnonymous`: a missing user would put every client in one key space, where one client's
 * key can replay another's payment confirmation.
 *
 * @example
 * const route = resolveRouteOptions({ requireKey: true }, expressDefaults);
 */
export function resolveRouteOptions<Req>(
  options: IdempotencyRouteOptions<Req>,
  framework: FrameworkDefaults<Req>,
): ResolvedRouteOptions<Req> {
  if (!options.getUserId && !options.allowAnonymous && process.env.NODE_ENV === "production") {
    throw new Error(
      "idempotency: a route needs `getUserId` in production (or `allowAnonymous: true`): without it, keys of requests with no authenticated user share one anonymous scope.",
    );
  }
  const replayedHeader = options.replayedHeader ?? "Idempotent-Replayed";
  if (replayedHeader !== false && !HEADER_NAME.test(replayedHeader)) {
    throw new TypeError(
      `idempotency: \`replayedHeader\` must be a header name or false, got ${JSON.stringify(replayedHeader)}.`,
    );
  }
  const errors = options.errors ?? "answer";
  if (errors !== "answer" && errors !== "throw") {
    throw new TypeError(`idempotency: \`errors\` must be "answer" or "throw", got ${JSON.stringify(errors)}.`);
  }
  return {
    getUserId: options.getUserId
      ? routeUserId(options.getUserId)
      : frameworkUserId(framework.userIdOf, options.allowAnonymous === true),
    getOperation: options.getOperation ? routeOperation(options.getOperation) : framework.operationOf,
    getBody: options.getBody ?? framework.bodyOf,
    getFingerprint: options.getFingerprint,
    requireKey: options.requireKey ?? false,
    statusMap: options.statusMap ?? {},
    replayHeaders: replayableHeaders(options.replayHeaders),
    classifyResponse: options.classifyResponse ?? classifyResponseStatus,
    isPermanentError: options.isPermanentError ?? (() => false),
    replayFailures: options.replayFailures ?? false,
    replayedHeader: replayedHeader === false ? undefined : replayedHeader.toLowerCase(),
    errors,
    waitMs: options.waitMs === undefined ? undefined : checkWaitMs(options.waitMs),
  };
}

/**
 * The route's own `getOperation`, checked: it may not name a consumer's scope, or a request's key
 * could replay (or block) a queue message of the same id. The defaults ("<METHOD> <path>") never do.
 */
function routeOperation<Req>(getOperation: GetOperation<Req>): GetOperation<Req> {
  return function routeOperationOf(req) {
    const operation = getOperation(req);
    if (typeof operation === "string" && operation.startsWith(CONSUMER_OPERATION_PREFIX)) {
      throw new IdempotencySetupError(
        `idempotency: getOperation returned "${operation}"; names starting with "${CONSUMER_OPERATION_PREFIX}" are the inbox's (handler.consume). Name the route otherwise.`,
      );
    }
    return operation;
  };
}
