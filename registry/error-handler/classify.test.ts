// What may decide a status and reach the client: only errors that declare themselves an answer for it.
import { describe, expect, it } from "vitest";
import { CLIENT_ANSWER } from "./declared";
import { createProblemHandler } from "./problem";
import { requestValidationError } from "./request-validation";
import { captureLogger } from "./testing/capture-logger";

const request = { requestId: "req_1", path: "/payments" };

function setup(options: Parameters<typeof createProblemHandler>[0] = {}) {
  const { logger, lines } = captureLogger();
  return { toProblem: createProblemHandler({ logger, ...options }), lines };
}

/** What axios rejects with when the payment provider answers 401 (its documented AxiosError fields). */
function axiosError(status: number) {
  return Object.assign(new Error(`Request failed with status code ${status}`), {
    name: "AxiosError",
    isAxiosError: true,
    code: "ERR_BAD_REQUEST",
    status,
    config: { headers: { authorization: "Bearer sk_live_provider" } },
    response: { status, data: { message: "Invalid API key sk_live_provider" } },
  });
}

describe("the error handler trusts any error's status (regression)", () => {
  it.each([401, 404, 422])(
    "an axios error whose downstream answered %i is a 500, its message kept in the log",
    (status) => {
      const { toProblem, lines } = setup();
      const problem = toProblem(axiosError(status), request);
      expect(problem.body).toMatchObject({ status: 500, code: "INTERNAL_ERROR" });
      expect(JSON.stringify(problem)).not.toMatch(/Request failed|sk_live/);
      expect(lines[0]).toMatchObject({
        level: "error",
        error: { name: "AxiosError", message: `Request failed with status code ${status}`, status },
      });
    },
  );

  it("a downstream's error is a 500 even when it looks declared: got's HTTPError, undici's ResponseError, a driver's error", () => {
    const { toProblem } = setup({ statuses: { "23505": 409 } });
    const got = Object.assign(new Error("Response code 404 (Not Found)"), {
      name: "HTTPError",
      code: "ERR_NON_2XX_3XX_RESPONSE",
      response: { statusCode: 404 },
    });
    const undici = Object.assign(new Error("Response Error"), {
      name: "ResponseError",
      code: "UND_ERR_RESPONSE",
      statusCode: 404,
      expose: true,
    });
    const pg = Object.assign(new Error('duplicate key value violates unique constraint "payments_pkey"'), {
      code: "23505",
      severity: "ERROR",
      status: 409,
    });
    for (const err of [got, undici, pg])
      expect(toProblem(err, request).body).toMatchObject({ status: 500, code: "INTERNAL_ERROR" });
  });

  it("a plain error with a status is a 500: a status is not a declaration", () => {
    const { toProblem } = setup();
    const fetchFailure = Object.assign(new Error("provider answered 403: account acct_9 frozen"), { status: 403 });
    expect(toProblem(fetchFailure, request).body).toMatchObject({ status: 500, code: "INTERNAL_ERROR" });
    expect(JSON.stringify(toProblem(fetchFailure, request))).not.toContain("acct_9");
  });

  it("what declares itself keeps its status: http-errors, Hono's HTTPException, Fastify's own, this block's mark", () => {
    const { toProblem } = setup();
    const httpErrors = Object.assign(new Error("No such payment."), { status: 404, statusCode: 404, expose: true });
    const hono = Object.assign(new Error("Unauthorized"), {
      status: 401,
      res: undefined,
      getResponse: () => new Response(null, { status: 401 }),
    });
    const fastify = Object.assign(new Error("Request body is too large"), {
      code: "FST_ERR_CTP_BODY_TOO_LARGE",
      statusCode: 413,
    });
    const marked = Object.assign(new Error("Card declined."), { status: 402, [CLIENT_ANSWER]: true });
    expect([httpErrors, hono, fastify, marked].map((err) => toProblem(err, request).body.status)).toEqual([
      404, 401, 413, 402,
    ]);
    expect(toProblem(httpErrors, request).body.detail).toBe("No such payment.");
  });
});

describe("any error with an `issues` array is the client's validation error (regression)", () => {
  it("a ZodError from parsing the payment provider's answer is a 500 that describes nothing", () => {
    const { toProblem } = setup();
    const providerSchemaError = Object.assign(new Error("[...]"), {
      name: "ZodError",
      issues: [
        {
          code: "invalid_type",
          expected: "string",
          path: ["data", "risk_score_internal"],
          message: "Invalid input: expected string, received number",
        },
      ],
    });
    const problem = toProblem(providerSchemaError, request);
    expect(problem.body).toMatchObject({ status: 500, code: "INTERNAL_ERROR" });
    expect(JSON.stringify(problem)).not.toContain("risk_score_internal");
  });

  it("valibot's default message quotes the card number; the issue built for the client does not", () => {
    const { toProblem } = setup();
    const valibotIssue = {
      kind: "validation",
      type: "regex",
      expected: "/^\\d{16}$/",
      received: '"4242 4242 4242 4242"',
      input: "4242 4242 4242 4242",
      path: [{ key: "card" }, { key: "number" }],
      message: 'Invalid format: Expected /^\\d{16}$/ but received "4242 4242 4242 4242"',
    };
    const problem = toProblem(requestValidationError([valibotIssue]), request);
    expect(problem.body.issues).toEqual([
      { path: ["card", "number"], pointer: "/card/number", message: "Expected /^\\d{16}$/.", code: "regex" },
    ]);
    expect(JSON.stringify(problem)).not.toContain("4242");
  });

  it("an expectation that quotes the input (arktype's union) is left out", () => {
    const { toProblem } = setup();
    const arktypeIssue = {
      code: "union",
      path: ["currency"],
      expected: 'currency must be "EUR" or "USD" (was "XYZ")',
      actual: '"XYZ"',
      message: 'currency must be "EUR" or "USD" (was "XYZ")',
    };
    expect(toProblem(requestValidationError([arktypeIssue]), request).body.issues).toEqual([
      { path: ["currency"], pointer: "/currency", message: "Invalid value.", code: "union" },
    ]);
  });
});

describe("a route's statusMap 425 still comes out 409 (regression)", () => {
  /** Shaped like registry/idempotency's IdempotencyError after an adapter applied the route's statusMap. */
  const inProgress = (status: number) =>
    Object.assign(new Error("Still running."), {
      name: "IdempotencyError",
      code: "REQUEST_IN_PROGRESS",
      status,
      retryAfterSeconds: 1,
    });

  it("a block's error keeps the status it carries; the table only fills in", () => {
    const { toProblem } = setup();
    expect(toProblem(inProgress(425), request).status).toBe(425);
    expect(toProblem(Object.assign(new Error("Wait."), { code: "REQUEST_IN_PROGRESS" }), request).status).toBe(409);
  });

  it("your own `statuses` win over it", () => {
    const { toProblem } = setup({ statuses: { REQUEST_IN_PROGRESS: 423 } });
    expect(toProblem(inProgress(425), request).status).toBe(423);
  });
});
