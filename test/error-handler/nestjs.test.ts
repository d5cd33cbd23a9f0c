// NestJS on both platforms over a real listener: every kind of error answered as problem+json by the global filter.
import {
  BadRequestException,
  Body,
  Controller,
  HttpException,
  Module,
  NotFoundException,
  Post,
  type INestApplication,
} from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { FastifyAdapter } from "@nestjs/platform-fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProblemDetailsFilter } from "@/blocks/error-handler/adapters/nestjs";
import { requestId } from "@/blocks/logger/adapters/express";
import { captureLogs } from "@/blocks/logger/testing/capture-logs";
import { sendTo } from "./support/http";
import {
  expectProblem,
  IdempotencyError,
  rateLimitError,
  unknownError,
  validationError,
  declinedError,
  downstreamError,
  SUITE_OPTIONS,
} from "./support/scenarios";
import { itAnswersEveryErrorAsAProblem } from "./support/suite";

@Controller()
class ErrorsController {
  @Post("in-progress")
  inProgress() {
    throw new IdempotencyError("REQUEST_IN_PROGRESS", "A request with this key is still running.", 2);
  }

  @Post("limited")
  limited() {
    throw rateLimitError();
  }

  @Post("validated")
  validated() {
    throw validationError();
  }

  @Post("parsed")
  parsed(@Body() body: unknown) {
    return body;
  }

  @Post("unknown")
  async unknown() {
    throw unknownError();
  }

  @Post("declined")
  declined() {
    throw declinedError();
  }

  @Post("downstream")
  async downstream() {
    throw downstreamError();
  }

  /** What ValidationPipe throws by default (class-validator's messages, flattened). */
  @Post("pipe")
  pipe() {
    throw new BadRequestException(["amount must be a positive number", "currency must be one of: EUR, USD"]);
  }

  @Post("missing")
  missing() {
    throw new NotFoundException("Payment pay_1 does not exist.");
  }

  /** What the idempotency block's interceptor throws for a key reused with another payload. */
  @Post("reused")
  reused() {
    throw new HttpException(
      { error: { code: "KEY_REUSED_WITH_DIFFERENT_REQUEST", message: "This key was used for another request." } },
      409,
    );
  }
}

@Module({ controllers: [ErrorsController] })
class AppModule {}

describe.each([
  ["Express platform, with the logger block's requestId()", "express"],
  ["Fastify platform, with Fastify's request ids", "fastify"],
] as const)("nestjs %s", (_name, platform) => {
  const { logger, lines } = captureLogs();
  let app: INestApplication;
  let baseUrl = "";
  beforeAll(async () => {
    app =
      platform === "express"
        ? await NestFactory.create(AppModule, { logger: false })
        : await NestFactory.create(AppModule, new FastifyAdapter({ genReqId: () => crypto.randomUUID() }), {
            logger: false,
          });
    if (platform === "express") app.use(requestId());
    app.useGlobalFilters(new ProblemDetailsFilter({ logger, ...SUITE_OPTIONS }));
    await app.listen(0, "127.0.0.1");
    baseUrl = (await app.getUrl()).replace("[::1]", "127.0.0.1");
  });
  afterAll(() => app.close());

  const send = sendTo(() => baseUrl);

  itAnswersEveryErrorAsAProblem({ lines, send });

  it("ValidationPipe's BadRequestException: 422 with its messages as issues", async () => {
    const body = expectProblem(await send("POST", "/pipe", "{}"), lines, { status: 422, code: "VALIDATION_FAILED" });
    expect(body.issues).toEqual([
      { path: [], pointer: "", message: "amount must be a positive number" },
      { path: [], pointer: "", message: "currency must be one of: EUR, USD" },
    ]);
  });

  it("a NotFoundException of a route: 404 with its message", async () => {
    const body = expectProblem(await send("POST", "/missing", "{}"), lines, { status: 404, code: "NOT_FOUND" });
    expect(body.detail).toBe("Payment pay_1 does not exist.");
  });

  it("the idempotency interceptor's HttpException: its code through the table", async () => {
    const body = expectProblem(await send("POST", "/reused", "{}"), lines, {
      status: 409,
      code: "KEY_REUSED_WITH_DIFFERENT_REQUEST",
    });
    expect(body.detail).toBe("This key was used for another request.");
  });
});
