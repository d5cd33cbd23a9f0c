// The HTTP layer the Express, Fastify and Hono adapters share: key header, options, flow, errors and replay.
export { captureNodeResponse } from "./capture-node-response";
export type { NodeResponseCapture } from "./capture-node-response";
export { classifyResponseStatus } from "./classify-response";
export type { ClassifyResponse, ResponseClass } from "./classify-response";
export type { IdempotencyContext, IdempotencyOutcome } from "./context";
export { idempotencyErrorResponse } from "./error-response";
export { normalizeHeaders, toHttpResponse } from "./http-response";
export type { HttpHeaders, HttpResponse, RouteResult } from "./http-response";
export { IDEMPOTENCY_KEY_HEADER, parseIdempotencyKey } from "./key-header";
export type { HeaderValue } from "./key-header";
export { protectRoute, UncapturableResponseError } from "./protect";
export type { Protect, ProtectedRequest, ProtectOutcome } from "./protect";
export { resolveRouteOptions } from "./route-options";
export type {
  FrameworkDefaults,
  GetBody,
  GetOperation,
  GetUserId,
  IdempotencyRouteOptions,
  IsPermanentError,
  ResolvedRouteOptions,
  WrapperRouteOptions,
} from "./route-options";
export { DEFAULT_REPLAY_HEADERS, fromStoredResponse, replayableHeaders, toStoredResponse } from "./stored-response";
export type { StoredResponse } from "./stored-response";
