// The checks every framework's app passes, written once: each test file builds its app with these routes and hands over `send`.
import { expect, it } from "vitest";
import type { LogLine } from "@/blocks/logger/testing/capture-logs";
import { expectProblem, expectServerErrorLogged, TRACE_ID, VALIDATION_ISSUES, type Answer } from "./scenarios";

/**
 * The app behind `send` answers, with the error handler installed:
 * POST /in-progress (throws IdempotencyError REQUEST_IN_PROGRESS, 2 s), POST /limited (rateLimitError()),
 * POST /validated (validationError()), POST /parsed (parses its JSON body), POST /unknown (unknownError()),
 * POST /declined (declinedError()), POST /downstream (downstreamError()), and nothing at GET /nowhere; its
 * handler has SUITE_OPTIONS.
 */
export type ProblemApp = {
  lines: LogLine[];
  send(method: "GET" | "POST", path: string, body?: string): Promise<Answer>;
};

export function itAnswersEveryErrorAsAProblem(app: ProblemApp, options: { validationIssues?: unknown } = {}): void {
  it("IdempotencyError REQUEST_IN_PROGRESS: 409 with Retry-After", async () => {
    const answer = await app.send("POST", "/in-progress", "{}");
    expect(expectProblem(answer, app.lines, { status: 409, code: "REQUEST_IN_PROGRESS" }).detail).toBe(
      "A request with this key is still running.",
    );
    expect(answer.headers["retry-after"]).toBe("2");
  });

  it("RATE_LIMITED: 429 with its Retry-After and RateLimit headers", async () => {
    const answer = await app.send("POST", "/limited", "{}");
    expectProblem(answer, app.lines, { status: 429, code: "RATE_LIMITED" });
    expect(answer.headers).toMatchObject({
      "retry-after": "12",
      "ratelimit-policy": '"payments";q=10;w=60',
      ratelimit: '"payments";r=0;t=12',
    });
  });

  it("validation error: 422 with its issues, not the rejected value", async () => {
    const body = expectProblem(await app.send("POST", "/validated", "{}"), app.lines, {
      status: 422,
      code: "VALIDATION_FAILED",
    });
    expect(body.issues).toEqual(options.validationIssues ?? VALIDATION_ISSUES);
  });

  it("malformed JSON body: 400, the body not echoed", async () => {
    expectProblem(await app.send("POST", "/parsed", '{"password":"hunter2"'), app.lines, {
      status: 400,
      code: "MALFORMED_REQUEST_BODY",
    });
  });

  it("unknown route: 404", async () => {
    expect(
      expectProblem(await app.send("GET", "/nowhere?token=hunter2"), app.lines, { status: 404, code: "NOT_FOUND" })
        .instance,
    ).toBe("/nowhere");
  });

  it("a defined problem: its status, type, extension member, and title in the client's language", async () => {
    const answer = await app.send("POST", "/declined", "{}");
    const body = expectProblem(answer, app.lines, {
      status: 402,
      code: "CARD_DECLINED",
      type: "https://docs.example.com/problems/card-declined",
    });
    expect(body).toMatchObject({
      title: "Karte abgelehnt",
      detail: "The issuer declined the card.",
      declineCode: "insufficient_funds",
    });
    expect(answer.headers).toMatchObject({ "content-language": "de", vary: expect.stringMatching(/accept-language/i) });
  });

  it("every problem carries the trace id of the request's traceparent", async () => {
    const answers = [
      await app.send("POST", "/in-progress", "{}"),
      await app.send("POST", "/unknown", "{}"),
      await app.send("GET", "/nowhere"),
    ];
    expect(answers.map((answer) => (JSON.parse(answer.text) as { traceId?: string }).traceId)).toEqual([
      TRACE_ID,
      TRACE_ID,
      TRACE_ID,
    ]);
    expect(app.lines.filter((line) => line.status === 500).every((line) => line.traceId === TRACE_ID)).toBe(true);
  });

  it("a downstream client's error (axios, the provider's 404): 500, its status only in the log", async () => {
    const answer = await app.send("POST", "/downstream", "{}");
    const body = expectProblem(answer, app.lines, { status: 500, code: "INTERNAL_ERROR" });
    expect(answer.text).not.toMatch(/status code 404|cus_/);
    expect(app.lines.find((line) => line.requestId === body.requestId && line.level === "error")?.error).toMatchObject({
      name: "AxiosError",
      code: "ERR_BAD_REQUEST",
    });
  });

  it("unknown error: 500 with a generic detail; name, message and code in the log", async () => {
    const body = expectProblem(await app.send("POST", "/unknown", "{}"), app.lines, {
      status: 500,
      code: "INTERNAL_ERROR",
    });
    expectServerErrorLogged(app.lines, body.requestId);
  });
}
