import { describe, expect, it } from "vitest";
import { createProblemHandler } from "./problem";
import { requestValidationError } from "./request-validation";
import { captureLogger } from "./testing/capture-logger";

const request = { requestId: "req_1", path: "/payments" };

function setup(options: Parameters<typeof createProblemHandler>[0] = {}) {
  const { logger, lines } = captureLogger();
  return { toProblem: createProblemHandler({ logger, ...options }), lines };
}

/** Shaped like the idempotency block's error, without importing it. */
class IdempotencyError extends Error {
  override readonly name = "IdempotencyError";
  readonly code: string;
  readonly retryAfterSeconds: number | undefined;
  constructor(code: string, message: string, retryAfterSeconds?: number) {
    super(message);
    this.code = code;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

describe("createProblemHandler", () => {
  it("builds no line for a 4xx when the logger reports info off (pino's isLevelEnabled), and still logs a 5xx", () => {
    const calls: string[] = [];
    const logger = {
      isLevelEnabled: (level: string) => level !== "info",
      info: () => void calls.push("info"),
      warn: () => void calls.push("warn"),
      error: () => void calls.push("error"),
    };
    const toProblem = createProblemHandler({ logger });
    expect(toProblem(new IdempotencyError("REQUEST_IN_PROGRESS", "Still running."), request).status).toBe(409);
    expect(calls).toEqual([]);
    expect(toProblem(new Error("boom"), request).status).toBe(500);
    expect(calls).toEqual(["error"]);
  });

  it("maps a known code through the table, with its message and Retry-After", () => {
    const { toProblem } = setup();
    const problem = toProblem(
      new IdempotencyError("REQUEST_IN_PROGRESS", "The first request with this key is still running.", 1.2),
      request,
    );
    expect(problem).toEqual({
      status: 409,
      headers: { "content-type": "application/problem+json", "retry-after": "2" },
      body: {
        type: "about:blank",
        title: "Conflict",
        status: 409,
        detail: "The first request with this key is still running.",
        instance: "/payments",
        code: "REQUEST_IN_PROGRESS",
        requestId: "req_1",
      },
    });
  });

  it("carries a rate-limit error's RateLimit headers over, and nothing outside the allowlist", () => {
    const { toProblem } = setup();
    const err = Object.assign(new Error("Too many requests."), {
      code: "RATE_LIMITED",
      headers: {
        "Retry-After": "12",
        "RateLimit-Policy": '"default";q=10;w=60',
        RateLimit: '"default";r=0;t=12',
        Authorization: "Bearer secret",
      },
    });
    const problem = toProblem(err, request);
    expect(problem.status).toBe(429);
    expect(problem.headers).toEqual({
      "content-type": "application/problem+json",
      "retry-after": "12",
      "ratelimit-policy": '"default";q=10;w=60',
      ratelimit: '"default";r=0;t=12',
    });
  });

  it("takes your codes, and your overrides of the defaults", () => {
    const { toProblem } = setup({ statuses: { CARD_DECLINED: 402, REQUEST_IN_PROGRESS: 425 } });
    expect(toProblem(Object.assign(new Error("Declined."), { code: "CARD_DECLINED" }), request).body).toMatchObject({
      status: 402,
      code: "CARD_DECLINED",
      detail: "Declined.",
    });
    expect(toProblem(new IdempotencyError("REQUEST_IN_PROGRESS", "Wait."), request).status).toBe(425);
  });

  it("refuses, when created, a status that is not an error status", () => {
    expect(() => createProblemHandler({ statuses: { CARD_DECLINED: 4020 } })).toThrow(
      /CARD_DECLINED must be an integer from 400 to 599/,
    );
  });

  it("answers a request validation error with its issues, without the rejected values", () => {
    const { toProblem } = setup();
    const zodIssues = [
      {
        code: "invalid_type",
        expected: "string",
        path: ["card", "number"],
        message: "Invalid input: expected string, received number",
        input: 4242424242424242,
      },
    ];
    const problem = toProblem(requestValidationError(zodIssues), request);
    expect(problem.body).toMatchObject({
      status: 422,
      code: "VALIDATION_FAILED",
      issues: [
        { path: ["card", "number"], pointer: "/card/number", message: "Expected string.", code: "invalid_type" },
      ],
    });
    expect(JSON.stringify(problem.body)).not.toContain("4242");
  });

  it("reads valibot's path objects and Fastify's Ajv errors too, and sends 400 when the table says so", () => {
    const { toProblem } = setup({ statuses: { VALIDATION_FAILED: 400 } });
    const valibotIssues = [
      {
        kind: "validation",
        type: "min_length",
        expected: ">=2",
        received: "1",
        path: [{ key: "items" }, { key: 0 }],
        message: "Invalid length: Expected >=2 but received 1",
      },
    ];
    expect(toProblem(requestValidationError(valibotIssues), request).body).toMatchObject({
      status: 400,
      issues: [{ path: ["items", 0], pointer: "/items/0", message: "Expected >=2.", code: "min_length" }],
    });
    const fastifyLike = {
      statusCode: 400,
      code: "FST_ERR_VALIDATION",
      validation: [{ instancePath: "/a~1b/0", keyword: "type", message: "must be number", params: { value: "x" } }],
    };
    expect(toProblem(fastifyLike, request).body.issues).toEqual([
      { path: ["a/b", "0"], pointer: "/a~1b/0", message: "must be number", code: "type" },
    ]);
  });

  it("does not echo a body that failed to parse", () => {
    const { toProblem } = setup();
    const bodyParserError = Object.assign(new SyntaxError(`Unexpected token 'h', "hunter2" is not valid JSON`), {
      type: "entity.parse.failed",
      status: 400,
      body: "hunter2",
    });
    const problem = toProblem(bodyParserError, request);
    expect(problem.body).toMatchObject({
      status: 400,
      code: "MALFORMED_REQUEST_BODY",
      detail: "The request body could not be parsed.",
    });
    expect(JSON.stringify(problem.body)).not.toContain("hunter2");
  });

  it("keeps the 4xx status of an http-errors error, and its message unless `expose` is false", () => {
    const { toProblem } = setup();
    expect(toProblem({ status: 403, message: "Not your account.", expose: true }, request).body).toMatchObject({
      status: 403,
      title: "Forbidden",
      code: "FORBIDDEN",
      detail: "Not your account.",
    });
    expect(
      toProblem({ statusCode: 401, message: "token expired for user 7", expose: false }, request).body.detail,
    ).toBe("Unauthorized");
  });

  it("never sends internals of a server error, and logs them with the requestId", () => {
    const { toProblem, lines } = setup();
    const err = Object.assign(
      new Error('connect failed: postgres://user:hunter2@db/prod while running SELECT * FROM "cards"'),
      {
        code: "ECONNREFUSED",
        config: { headers: { authorization: "Bearer sk_live_123" } },
      },
    );
    const problem = toProblem(err, request);
    expect(problem.status).toBe(500);
    expect(problem.body.code).toBe("INTERNAL_ERROR");
    const sent = JSON.stringify(problem);
    const firstFrame = err.stack?.split("\n")[1]?.trim() ?? "";
    for (const secret of ["hunter2", "SELECT", "ECONNREFUSED", "sk_live", firstFrame])
      expect(sent).not.toContain(secret);
    expect(lines[0]).toEqual({
      level: "error",
      msg: "request failed",
      requestId: "req_1",
      status: 500,
      code: "INTERNAL_ERROR",
      error: {
        name: "Error",
        message: 'connect failed: postgres://[Redacted]@db/prod while running SELECT * FROM "cards"',
        code: "ECONNREFUSED",
      },
    });
    expect(lines[1]).toMatchObject({
      level: "debug",
      requestId: "req_1",
      stack: err.stack?.replace("user:hunter2@", "[Redacted]@"),
    });
    // The log keeps what helps (host, statement) and never the URL's credentials or the client's headers.
    for (const secret of ["hunter2", "sk_live"]) expect(JSON.stringify(lines)).not.toContain(secret);
  });

  it("hides the message of a coded 5xx as well", () => {
    const { toProblem } = setup();
    const problem = toProblem(new IdempotencyError("STORE_UNAVAILABLE", "pool timeout at db.internal:5432"), request);
    expect(problem.body).toMatchObject({ status: 503, code: "STORE_UNAVAILABLE" });
    expect(problem.body.detail).not.toContain("db.internal");
  });

  it("treats what is not an Error (a string, null) as unknown", () => {
    const { toProblem, lines } = setup();
    expect(toProblem("boom", request).status).toBe(500);
    expect(toProblem(null, request).status).toBe(500);
    expect(lines.filter((line) => line.level === "error").map((line) => line.error)).toEqual([
      { name: "string", message: "boom" },
      { name: "object", message: "null" },
    ]);
  });

  it("counts every answer by status and code, and names the type through typeOf", () => {
    const counted: string[] = [];
    const { toProblem } = setup({
      metrics: { count: (status, code) => counted.push(`${status} ${code}`) },
      typeOf: (code) => `https://docs.example.com/errors#${code}`,
    });
    expect(toProblem(new IdempotencyError("REQUEST_FAILED", "Failed."), request).body.type).toBe(
      "https://docs.example.com/errors#REQUEST_FAILED",
    );
    toProblem(new Error("x"), request);
    expect(counted).toEqual(["409 REQUEST_FAILED", "500 INTERNAL_ERROR"]);
  });
});
