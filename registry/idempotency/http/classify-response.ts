// Decides whether a response the route produced may be stored and replayed.

/** `success` is stored and replayed; `transient` frees the key for a retry; `permanent` marks it FAILED. */
export type ResponseClass = "success" | "transient" | "permanent";

/** A route's own rule, e.g. to treat a 409 from a downstream lock as transient. */
export type ClassifyResponse = (status: number) => ResponseClass;

/**
 * The default rule. Below 400 is a success: a 303 after a POST is the route's answer as much as a
 * 201. 5xx, 408 and 429 may pass on retry; any other 4xx will not, so replaying it is pointless and
 * running it again is wasted.
 *
 * @example
 * classifyResponseStatus(201); // "success"
 * classifyResponseStatus(503); // "transient"
 * classifyResponseStatus(422); // "permanent"
 */
export function classifyResponseStatus(status: number): ResponseClass {
  if (status < 400) return "success";
  if (status >= 500 || status === 408 || status === 429) return "transient";
  return "permanent";
}
