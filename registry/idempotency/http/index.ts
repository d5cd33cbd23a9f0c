// The HTTP layer every adapter shares: key header, options, fingerprint, flow, errors and replay.
export { captureNodeResponse } from "./capture-node-response";
export type { NodeResponseCapture } from "./capture-node-response";
export { classifyResponseStatus } from "./classify-response";
export type { ClassifyResponse, ResponseClass } from "./classify-response";
export type { IdempotencyContext, IdempotencyOutcome } from "./context";
export { idempotencyErrorResponse } from "./error-response";
export { normalizeHeaders, toHttpResponse } from "./http-response";
export type { HttpHeaders, HttpResponse, RouteResult, Uncaptured } from "./http-response";
export { IDEMPOTENCY_KEY_HEADER, parseIdempotencyKey } from "./key-header";
export type { HeaderValue } from "./key-header";
export { protectRoute } from "./protect";
export { canonicalQuery, requestFingerprint } from "./request-fingerprint";
export type { RequestFingerprint } from "./request-fingerprint";
export type { HttpVerdict, Protect, ProtectedRequest } from "./protect";
export { resolveRouteOptions } from "./route-options";
export type {
  FrameworkDefaults,
  GetBody,
  GetFingerprint,
  GetOperation,
  GetUserId,
  IdempotencyRouteOptions,
  IsPermanentError,
  ResolvedRouteOptions,
  RouteContext,
  WrapperRouteOptions,
} from "./route-options";
export {
  DEFAULT_REPLAY_HEADERS,
  isStoredResponse,
  replayableHeaders,
  replayResponse,
  toStoredResponse,
} from "./stored-response";
export { ANONYMOUS_USER_ID, IdempotencySetupError } from "./user-id";
export type { StoredResponse } from "./stored-response";
