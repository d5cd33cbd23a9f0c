import Fastify from "fastify";
import { beforeAll, describe, expect, it } from "vitest";
import { defineProblem } from "../define-problem";
import type { ProblemBody } from "../problem";
import { captureLogger } from "../testing/capture-logger";
import { problemDetailsPlugin } from "./fastify";

const { logger, lines } = captureLogger();
const CardDeclined = defineProblem({
  code: "CARD_DECLINED",
  status: 402,
  title: "Card declined",
  type: "https://docs.example.com/problems/card-declined",
});
const app = Fastify();
// Registered before the routes, so the handlers cover them.
beforeAll(async () => {
  await app.register(problemDetailsPlugin, { logger, problems: [CardDeclined] });
  app.post("/payments", () => {
    throw Object.assign(new Error("The first request with this key is still running."), {
      code: "REQUEST_IN_PROGRESS",
      retryAfterSeconds: 1,
    });
  });
  app.post(
    "/orders",
    { schema: { body: { type: "object", required: ["amount"], properties: { amount: { type: "number" } } } } },
    () => "created",
  );
  app.post("/cards", () => {
    throw CardDeclined.create("The issuer declined the card.");
  });
  app.get("/report", () => {
    throw new Error("password authentication failed for postgres://app:hunter2@db/prod");
  });
});

describe("fastify problemDetailsPlugin", () => {
  it("answers a coded error with its status, code and Retry-After", async () => {
    const res = await app.inject({ method: "POST", url: "/payments", payload: {} });
    expect(res.statusCode).toBe(409);
    expect(res.headers["content-type"]).toBe("application/problem+json");
    expect(res.headers["retry-after"]).toBe("1");
    expect(res.json()).toMatchObject({ code: "REQUEST_IN_PROGRESS", instance: "/payments" });
  });

  it("answers a schema validation failure with its issues", async () => {
    const res = await app.inject({ method: "POST", url: "/orders", payload: { amount: "ten" } });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({
      code: "VALIDATION_FAILED",
      issues: [{ path: ["amount"], message: "must be number", code: "type" }],
    });
  });

  it("keeps an unknown error's message in the log, under the requestId the client got", async () => {
    const res = await app.inject({ method: "GET", url: "/report" });
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain("hunter2");
    expect(lines.find((line) => line.level === "error")).toMatchObject({
      requestId: res.json<ProblemBody>().requestId,
      error: { message: expect.stringContaining("postgres://[Redacted]@db/prod") as unknown },
    });
  });

  it("answers a defined problem with its type and title, and the traceparent's trace id", async () => {
    const res = await app.inject({
      method: "POST",
      url: "/cards",
      headers: { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" },
    });
    expect(res.statusCode).toBe(402);
    expect(res.json()).toMatchObject({
      type: CardDeclined.type,
      title: "Card declined",
      detail: "The issuer declined the card.",
      code: "CARD_DECLINED",
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
    });
  });

  it("answers an unknown route with a 404 problem", async () => {
    const res = await app.inject({ method: "GET", url: "/nowhere" });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: "NOT_FOUND", instance: "/nowhere" });
  });
});
