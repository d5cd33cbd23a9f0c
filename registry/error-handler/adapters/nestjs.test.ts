// Route tests for the NestJS exception filter on a real app (Express platform): copy them next to your own.
import {
  BadRequestException,
  Controller,
  Get,
  HttpException,
  Module,
  Post,
  type INestApplication,
} from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineProblem } from "../define-problem";
import type { ProblemBody } from "../problem";
import { captureLogger } from "../testing/capture-logger";
import { ProblemDetailsFilter } from "./nestjs";

const CardDeclined = defineProblem({
  code: "CARD_DECLINED",
  status: 402,
  title: "Card declined",
  type: "https://docs.example.com/problems/card-declined",
});

@Controller()
class PaymentsController {
  @Post("payments")
  pay() {
    throw Object.assign(new Error("The first request with this key is still running."), {
      code: "REQUEST_IN_PROGRESS",
      retryAfterSeconds: 1,
    });
  }

  /** What ValidationPipe throws when class-validator rejects the body. */
  @Post("orders")
  order() {
    throw new BadRequestException(["amount must be a positive number"]);
  }

  /** What the idempotency and rate-limiter interceptors throw: their `{ error: { code, message } }` answer. */
  @Post("cards")
  card() {
    throw CardDeclined.create("The issuer declined the card.");
  }

  @Post("refunds")
  refund() {
    throw new HttpException(
      { error: { code: "KEY_REUSED_WITH_DIFFERENT_REQUEST", message: "This key was used for another request." } },
      409,
    );
  }

  @Get("report")
  report() {
    throw new Error("password authentication failed for postgres://app:hunter2@db/prod");
  }
}

@Module({ controllers: [PaymentsController] })
class AppModule {}

const { logger, lines } = captureLogger();
let app: INestApplication;
let baseUrl = "";
beforeAll(async () => {
  app = await NestFactory.create(AppModule, { logger: false });
  app.useGlobalFilters(new ProblemDetailsFilter({ logger, problems: [CardDeclined] }));
  await app.listen(0, "127.0.0.1");
  baseUrl = (await app.getUrl()).replace("[::1]", "127.0.0.1");
});
afterAll(() => app.close());

describe("nestjs ProblemDetailsFilter", () => {
  it("answers a coded error with its status, code and Retry-After", async () => {
    const res = await fetch(`${baseUrl}/payments`, { method: "POST", headers: { "x-request-id": "req_1" } });
    expect(res.status).toBe(409);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await res.json()).toMatchObject({ code: "REQUEST_IN_PROGRESS", requestId: "req_1", instance: "/payments" });
  });

  it("answers ValidationPipe's BadRequestException with 422 and its messages as issues", async () => {
    const res = await fetch(`${baseUrl}/orders`, { method: "POST" });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({
      code: "VALIDATION_FAILED",
      issues: [{ path: [], message: "amount must be a positive number" }],
    });
  });

  it("maps an interceptor's { error: { code } } HttpException through the status table", async () => {
    const res = await fetch(`${baseUrl}/refunds`, { method: "POST" });
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({
      code: "KEY_REUSED_WITH_DIFFERENT_REQUEST",
      detail: "This key was used for another request.",
    });
  });

  it("answers a malformed JSON body with 400, the body not echoed", async () => {
    const res = await fetch(`${baseUrl}/payments`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"password":"hunter2"',
    });
    expect(res.status).toBe(400);
    expect(await res.text()).not.toContain("hunter2");
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

  it("answers Nest's own 404 (no route) with a 404 problem, the query left out", async () => {
    const res = await fetch(`${baseUrl}/nowhere?token=abc`);
    expect(res.status).toBe(404);
    const text = await res.text();
    expect(text).not.toContain("token=abc");
    expect(JSON.parse(text)).toMatchObject({ code: "NOT_FOUND", instance: "/nowhere" });
  });
});
