// Recognises a `{ "error": { "code", "message" } }` answer another block sent itself, so it can go out as a problem.
import type { ToProblem } from "./problem";

/** The error such an answer stands for; `headers` carries its Retry-After on to the problem. */
export type AnsweredError = {
  name: "AnsweredError";
  code: string;
  message: string;
  status: number;
  headers: Record<string, string>;
};

// The blocks' error bodies are a few hundred bytes; anything bigger is some route's own payload.
const MAX_ERROR_BODY_BYTES = 4096;

/**
 * The error behind an error response, when its body has the shape the idempotency and rate-limiter
 * adapters send and its code is in the table; `undefined` for every other response, which is
 * left as it is.
 *
 * @example
 * answeredError(toProblem, 409, "application/json", '{"error":{"code":"REQUEST_IN_PROGRESS","message":"..."}}', "1");
 * // { name: "AnsweredError", code: "REQUEST_IN_PROGRESS", message: "...", status: 409, headers: { "retry-after": "1" } }
 */
export function answeredError(
  toProblem: ToProblem,
  status: number,
  contentType: string | undefined,
  body: string,
  retryAfter?: string,
): AnsweredError | undefined {
  if (status < 400 || !/^application\/json\b/i.test(contentType ?? "") || body.length > MAX_ERROR_BODY_BYTES)
    return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const error = (parsed as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (typeof error?.code !== "string" || typeof error.message !== "string" || !toProblem.hasCode(error.code))
    return undefined;
  return {
    name: "AnsweredError",
    code: error.code,
    message: error.message,
    status,
    headers: retryAfter === undefined ? {} : { "retry-after": retryAfter },
  };
}
