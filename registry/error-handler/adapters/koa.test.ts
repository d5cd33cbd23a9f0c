// Route tests for the Koa error handler on a real app with @koa/router: copy them next to your own routes.
import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import Router from "@koa/router";
import Koa from "koa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineProblem } from "../define-problem";
import type { ProblemBody } from "../problem";
import { captureLogger } from "../testing/capture-logger";
import { problemDetails } from "./koa";

const { logger, lines } = captureLogger();
const CardDeclined = defineProblem({
  code: "CARD_DECLINED",
  status: 402,
  title: "Card declined",
  type: "https://docs.example.com/problems/card-declined",
});
const app = new Koa();
app.use(problemDetails({ logger, formatAnsweredErrors: true, problems: [CardDeclined] }));
const router = new Router();
router.post("/payments", () => {
  throw Object.assign(new Error("The first request with this key is still running."), {
    code: "REQUEST_IN_PROGRESS",
    retryAfterSeconds: 1,
  });
});
router.post("/orders", (ctx) => {
  ctx.throw(422, "The basket is empty.");
});
// What the idempotency and rate-limiter adapters send themselves; formatAnsweredErrors re-sends it as a problem.
router.post("/refunds", (ctx) => {
  ctx.status = 429;
  ctx.set("retry-after", "30");
  ctx.body = { error: { code: "RATE_LIMITED", message: "Too many requests: retry later." } };
});
router.post("/cards", () => {
  throw CardDeclined.create("The issuer declined the card.");
});
router.get("/report", () => {
  throw new Error("password authentication failed for postgres://app:hunter2@db/prod");
});
app.use(router.routes());

let server: Server;
let baseUrl = "";
beforeAll(async () => {
  server = app.listen(0, "127.0.0.1");
  await once(server, "listening");
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

describe("koa problemDetails()", () => {
  it("answers a coded error with its status, code and Retry-After", async () => {
    const res = await fetch(`${baseUrl}/payments`, { method: "POST", headers: { "x-request-id": "req_1" } });
    expect(res.status).toBe(409);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await res.json()).toMatchObject({ code: "REQUEST_IN_PROGRESS", requestId: "req_1", instance: "/payments" });
  });

  it("answers ctx.throw(422, message) with its status and message", async () => {
    const res = await fetch(`${baseUrl}/orders`, { method: "POST" });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ code: "UNPROCESSABLE_CONTENT", detail: "The basket is empty." });
  });

  it("re-sends another block's { error: { code } } answer as a problem, its Retry-After kept", async () => {
    const res = await fetch(`${baseUrl}/refunds`, { method: "POST" });
    expect(res.status).toBe(429);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.headers.get("retry-after")).toBe("30");
    expect(await res.json()).toMatchObject({ code: "RATE_LIMITED", detail: "Too many requests: retry later." });
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
