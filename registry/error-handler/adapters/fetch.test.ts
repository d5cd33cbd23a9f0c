import { describe, expect, it } from "vitest";
import { defineProblem } from "../define-problem";
import type { ProblemBody } from "../problem";
import { requestValidationError } from "../request-validation";
import { captureLogger } from "../testing/capture-logger";
import { createProblemResponse, withProblems } from "./fetch";

const { logger, lines } = captureLogger();
const CardDeclined = defineProblem({
  code: "CARD_DECLINED",
  status: 402,
  title: "Card declined",
  type: "https://docs.example.com/problems/card-declined",
});
const toProblemResponse = createProblemResponse({ logger, problems: [CardDeclined] });

/** What zod reports for `{ amount: z.number() }` given a string. */
const amountIssue = {
  path: ["amount"],
  message: "Invalid input: expected number, received string",
  code: "invalid_type",
  expected: "number",
};

/** A route handler as Next.js, Bun or Deno call it. */
async function POST(request: Request): Promise<Response> {
  try {
    const body = (await request.json()) as { amount?: unknown };
    if (typeof body.amount !== "number") throw requestValidationError([amountIssue]);
    throw new Error(`insert into payments failed: postgres://app:hunter2@db/prod`);
  } catch (err) {
    return toProblemResponse(err, request);
  }
}

const post = (body: string, headers: Record<string, string> = {}) =>
  POST(
    new Request("https://api.example.com/payments?debug=1", {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    }),
  );

describe("toProblemResponse", () => {
  it("answers a validation error with 422 and its issues", async () => {
    const res = await post('{"amount":"ten"}', { "x-request-id": "req_1" });
    expect(res.status).toBe(422);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(await res.json()).toMatchObject({
      code: "VALIDATION_FAILED",
      requestId: "req_1",
      instance: "/payments",
      issues: [{ path: ["amount"], pointer: "/amount", message: "Expected number." }],
    });
  });

  it("keeps an unknown error's message in the log, under the requestId the client got", async () => {
    const res = await post('{"amount":10}', { "x-request-id": "<script>" });
    const body = (await res.json()) as ProblemBody;
    expect(res.status).toBe(500);
    expect(body.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.stringify(body)).not.toContain("hunter2");
    expect(lines.find((line) => line.level === "error")).toMatchObject({
      requestId: body.requestId,
      error: { message: expect.stringContaining("postgres://[Redacted]@db/prod") as unknown },
    });
  });
});

it("answers a defined problem with its type and title, and the traceparent's trace id", async () => {
  const request = new Request("https://api.example.com/cards", {
    method: "POST",
    headers: { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" },
  });
  const res = toProblemResponse(CardDeclined.create("The issuer declined the card."), request);
  expect(res.status).toBe(402);
  expect(await res.json()).toMatchObject({
    type: CardDeclined.type,
    title: "Card declined",
    detail: "The issuer declined the card.",
    code: "CARD_DECLINED",
    traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
  });
});

describe("withProblems", () => {
  const problems = withProblems({ logger });

  it("rewrites another block's `{ error: { code } }` answer as a problem, keeping its Retry-After", async () => {
    const route = problems(() =>
      Response.json(
        { error: { code: "REQUEST_IN_PROGRESS", message: "Still running." } },
        { status: 409, headers: { "retry-after": "1" } },
      ),
    );
    const res = await route(new Request("https://api.example.com/payments", { method: "POST" }));
    expect(res.status).toBe(409);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await res.json()).toMatchObject({ code: "REQUEST_IN_PROGRESS", instance: "/payments" });
  });

  it("answers what the handler throws, and leaves its successful responses alone", async () => {
    const failing = problems(() => {
      throw new Error("postgres://app:hunter2@db/prod is down");
    });
    const res = await failing(new Request("https://api.example.com/payments", { method: "POST" }));
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain("hunter2");
    const ok = await problems(() => Response.json({ id: "pay_1" }, { status: 201 }))(
      new Request("https://api.example.com/payments"),
    );
    expect(await ok.json()).toEqual({ id: "pay_1" });
  });
});
