// The errors every framework's app throws, and the checks every framework's answer must pass.
import { expect } from "vitest";
import { z } from "zod";
import type { LogLine } from "@/blocks/logger/testing/capture-logs";
import {
  defineProblem,
  localizeFrom,
  requestValidationError,
  type ErrorHandlerOptions,
  type ProblemBody,
} from "@/blocks/error-handler";

/** Shaped like registry/idempotency's IdempotencyError, on purpose without importing it. */
export class IdempotencyError extends Error {
  override readonly name = "IdempotencyError";
  readonly code: string;
  readonly retryAfterSeconds: number | undefined;
  constructor(code: string, message: string, retryAfterSeconds?: number) {
    super(message);
    this.code = code;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Shaped like registry/rate-limiter's RateLimitError. */
export function rateLimitError() {
  return Object.assign(new Error("Too many requests for this key; retry after 12 seconds."), {
    name: "RateLimitError",
    code: "RATE_LIMITED",
    status: 429,
    retryAfterSeconds: 12,
    headers: { "Retry-After": "12", "RateLimit-Policy": '"payments";q=10;w=60', RateLimit: '"payments";r=0;t=12' },
  });
}

/** A request body that failed its zod schema, marked by the route as the request's (the only way issues reach a client). */
export function validationError() {
  const parsed = z.object({ password: z.string().min(10) }).safeParse({ password: "hunter2" });
  return requestValidationError(parsed.error?.issues ?? []);
}

/** What `validationError()` answers with: where, and what the schema expected; never the password. */
export const VALIDATION_ISSUES = [
  { path: ["password"], pointer: "/password", message: "Expected at least 10 characters.", code: "too_small" },
];

export const SECRETS = [
  "hunter2",
  "postgres://",
  "SELECT card_number",
  "sk_live_request_secret",
  "sk_live_client_config",
  "cus_sk_live_provider",
];

/** What a database driver or an HTTP client throws: internals in the message, credentials in its config. */
export function unknownError() {
  return Object.assign(
    new Error("query failed on postgres://user:hunter2@db/prod: SELECT card_number FROM cards WHERE user_id = $1"),
    {
      code: "ECONNRESET",
      config: { headers: { authorization: "Bearer sk_live_client_config" } },
    },
  );
}

/**
 * What axios throws when the payment provider answers 404: the provider's status on the error and on its
 * response, and `expose`, which an http-errors check alone would read as "tell the client". Its status is
 * the provider's, not an answer for our client.
 */
export function downstreamError() {
  return Object.assign(new Error("Request failed with status code 404"), {
    name: "AxiosError",
    isAxiosError: true,
    code: "ERR_BAD_REQUEST",
    status: 404,
    expose: true,
    response: { status: 404, data: { message: "No such customer cus_sk_live_provider" } },
  });
}

export const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";

/** Every request carries a credential that must never reach a log line, a trace, and a German speaker's languages. */
export const REQUEST_HEADERS = {
  authorization: "Bearer sk_live_request_secret",
  traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01`,
  "accept-language": "de-CH, en;q=0.5",
};

export const CardDeclined = defineProblem({
  code: "CARD_DECLINED",
  status: 402,
  title: "Card declined",
  type: "https://docs.example.com/problems/card-declined",
});

/** A defined problem with an extension member. */
export function declinedError() {
  return CardDeclined.create("The issuer declined the card.", { declineCode: "insufficient_funds" });
}

/** What every suite's handler gets besides its logger: the defined problem, and German titles. */
export const SUITE_OPTIONS: ErrorHandlerOptions = {
  problems: [CardDeclined],
  localize: localizeFrom({ de: { CARD_DECLINED: { title: "Karte abgelehnt" }, "404": { title: "Nicht gefunden" } } }),
};

/** The answer as every driver reports it. */
export type Answer = { status: number; headers: Record<string, string | undefined>; text: string };

/**
 * The checks every case shares: problem+json, the code, no secret and no stack in the body, and
 * one log line for the error under the requestId the client got (and the logger block echoed).
 */
export function expectProblem(
  answer: Answer,
  lines: LogLine[],
  expected: { status: number; code: string; type?: string },
): ProblemBody {
  expect(answer.status).toBe(expected.status);
  expect(answer.headers["content-type"]).toBe("application/problem+json");
  const body = JSON.parse(answer.text) as ProblemBody;
  expect(body).toMatchObject({ type: expected.type ?? "about:blank", status: expected.status, code: expected.code });
  expect(body.requestId).toMatch(/^[0-9a-f-]{36}$/);
  for (const secret of SECRETS) expect(answer.text).not.toContain(secret);
  expect(answer.text).not.toMatch(/\n\s+at /);
  expect(answer.text).not.toContain("stack");
  const echoed = answer.headers["x-request-id"];
  if (echoed !== undefined) expect(body.requestId).toBe(echoed);
  const line = lines.find((candidate) => candidate.requestId === body.requestId && candidate.code === expected.code);
  expect(line, `a log line with requestId ${body.requestId}`).toBeDefined();
  expect(line?.status).toBe(expected.status);
  for (const logged of lines) expect(JSON.stringify(logged)).not.toContain("sk_live_request_secret");
  return body;
}

/** The unknown error's log line: its name, message and code, and its stack only at debug. */
export function expectServerErrorLogged(lines: LogLine[], requestId: string): void {
  const error = lines.find((line) => line.requestId === requestId && line.level === "error");
  // The message stays for the reader, with the URL's credentials masked.
  expect(error?.error).toEqual({
    name: "Error",
    message: unknownError().message.replace("user:hunter2@", "[Redacted]@"),
    code: "ECONNRESET",
  });
  expect(JSON.stringify(lines.filter((line) => line.requestId === requestId))).not.toContain("hunter2");
  expect(JSON.stringify(error)).not.toContain("sk_live_client_config");
  const debug = lines.find((line) => line.requestId === requestId && line.level === "debug");
  expect(debug?.stack).toMatch(/^Error: query failed/);
}
