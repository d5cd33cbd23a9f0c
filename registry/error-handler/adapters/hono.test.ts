import { Hono } from "hono";
import { basicAuth } from "hono/basic-auth";
import { validator } from "hono/validator";
import { describe, expect, it } from "vitest";
import { defineProblem } from "../define-problem";
import type { ProblemBody } from "../problem";
import { captureLogger } from "../testing/capture-logger";
import { problemDetails } from "./hono";

const { logger, lines } = captureLogger();
const CardDeclined = defineProblem({
  code: "CARD_DECLINED",
  status: 402,
  title: "Card declined",
  type: "https://docs.example.com/problems/card-declined",
});
const app = new Hono();
const problems = problemDetails({ logger, problems: [CardDeclined] });
app.onError(problems.onError);
app.notFound(problems.notFound);
app.post("/payments", () => {
  throw Object.assign(new Error("The first request with this key is still running."), {
    code: "REQUEST_IN_PROGRESS",
    retryAfterSeconds: 1,
  });
});
app.post(
  "/orders",
  validator("json", (body: unknown) => body),
  (c) => c.json(c.req.valid("json"), 201),
);
app.use("/admin/*", basicAuth({ username: "admin", password: "s3cret" }));
app.get("/admin/report", (c) => c.text("ok"));
app.post("/cards", () => {
  throw CardDeclined.create("The issuer declined the card.");
});
app.get("/report", () => {
  throw new Error("password authentication failed for postgres://app:hunter2@db/prod");
});

describe("hono problemDetails()", () => {
  it("answers a coded error with its status, code and Retry-After", async () => {
    const res = await app.request("/payments", { method: "POST", headers: { "x-request-id": "req_1" } });
    expect(res.status).toBe(409);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await res.json()).toMatchObject({ code: "REQUEST_IN_PROGRESS", requestId: "req_1", instance: "/payments" });
  });

  it("answers a malformed JSON body (through hono/validator) with 400", async () => {
    const res = await app.request("/orders", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"password":"hunter2"',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: "MALFORMED_REQUEST_BODY" });
  });

  it("keeps an unknown error's message in the log, under the requestId the client got", async () => {
    const res = await app.request("/report");
    const body = (await res.json()) as ProblemBody;
    expect(res.status).toBe(500);
    expect(JSON.stringify(body)).not.toContain("hunter2");
    expect(lines.find((line) => line.level === "error")).toMatchObject({
      requestId: body.requestId,
      error: { message: expect.stringContaining("postgres://[Redacted]@db/prod") as unknown },
    });
  });

  it("keeps the WWW-Authenticate of an HTTPException's own response (hono/basic-auth)", async () => {
    const res = await app.request("/admin/report");
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Basic realm=/);
    expect(await res.json()).toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("answers a defined problem with its type and title, and the traceparent's trace id", async () => {
    const res = await app.request("/cards", {
      method: "POST",
      headers: { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" },
    });
    expect(res.status).toBe(402);
    expect(await res.json()).toMatchObject({
      type: CardDeclined.type,
      title: "Card declined",
      detail: "The issuer declined the card.",
      code: "CARD_DECLINED",
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
    });
  });

  it("answers an unknown route with a 404 problem", async () => {
    const res = await app.request("/nowhere");
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: "NOT_FOUND", instance: "/nowhere" });
  });
});
