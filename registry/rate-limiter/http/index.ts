// The shared HTTP part every adapter uses: header formatting and the request-to-decision step.
export { formatRateLimit, formatRateLimitPolicy, rateLimitHeaders, retryAfterSeconds } from "./headers";
export { limitRoute } from "./limit-route";
export type { FrameworkDefaults, LimitOutcome, RateLimitRouteOptions } from "./limit-route";
