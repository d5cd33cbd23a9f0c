import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineProblem } from "../define-problem";
import type { ProblemBody } from "../problem";
import { captureLogger } from "../testing/capture-logger";
import { problemDetails } from "./express";

const { logger, lines } = captureLogger();
const CardDeclined = defineProblem({
  code: "CARD_DECLINED",
  status: 402,
  title: "Card declined",
  type: "https://docs.example.com/problems/card-declined",
});
const app = express();
app.post("/payments", express.json(), () => {
  throw Object.assign(new Error("The first request with this key is still running."), {
    code: "REQUEST_IN_PROGRESS",
    retryAfterSeconds: 1,
  });
});
app.post("/cards", () => {
  throw CardDeclined.create("The issuer declined the card.");
});
app.get("/report", () => {
  throw new Error("password authentication failed for postgres://app:hunter2@db/prod");
});
const problems = problemDetails({ logger, problems: [CardDeclined] });
app.use(problems.notFound);
app.use(problems.onError);

let server: Server;
let baseUrl = "";
beforeAll(async () => {
  server = app.listen(0);
  await new Promise((resolve) => server.once("listening", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

describe("express problemDetails()", () => {
  it("answers a coded error with its status, code and Retry-After", async () => {
    const res = await fetch(`${baseUrl}/payments`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": "req_1" },
      body: "{}",
    });
    expect(res.status).toBe(409);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await res.json()).toMatchObject({ code: "REQUEST_IN_PROGRESS", requestId: "req_1", instance: "/payments" });
  });

  it("answers a malformed JSON body with 400", async () => {
    const res = await fetch(`${baseUrl}/payments`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"password":"hunter2"',
    });
    expect(res.status).toBe(400);
    expect(await res.text()).not.toContain("hunter2");
  });

  it("keeps an unknown error's message in the log, under the requestId the client got", async () => {
    const res = await fetch(`${baseUrl}/report`);
    const body = (await res.json()) as ProblemBody;
    expect(res.status).toBe(500);
    expect(JSON.stringify(body)).not.toContain("hunter2");
    expect(lines.find((line) => line.level === "error")).toMatchObject({
      requestId: body.requestId,
      error: { message: expect.stringContaining("postgres://[Redacted]@db/prod") as unknown },
    });
  });

  it("answers a defined problem with its type and title, and the traceparent's trace id", async () => {
    const res = await fetch(`${baseUrl}/cards`, {
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
    const res = await fetch(`${baseUrl}/nowhere?token=abc`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: "NOT_FOUND", instance: "/nowhere" });
  });
});
