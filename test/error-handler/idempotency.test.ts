// The idempotency (and rate-limiter) adapters answer their own errors with `{ error: { code, message } }`; these are the routes that send them as problems.
import Router from "@koa/router";
import { Body, Controller, HttpCode, Module, Post, type INestApplication } from "@nestjs/common";
import { APP_FILTER, APP_INTERCEPTOR, NestFactory } from "@nestjs/core";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import Koa from "koa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { problemDetails as expressProblemDetails } from "@/blocks/error-handler/adapters/express";
import { problemDetailsPlugin } from "@/blocks/error-handler/adapters/fastify";
import { withProblems } from "@/blocks/error-handler/adapters/fetch";
import { problemDetails as honoProblemDetails } from "@/blocks/error-handler/adapters/hono";
import { problemDetails as koaProblemDetails } from "@/blocks/error-handler/adapters/koa";
import { ProblemDetailsFilter } from "@/blocks/error-handler/adapters/nestjs";
import { IdempotencyHandler } from "@/blocks/idempotency";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import { idempotent as expressIdempotent } from "@/blocks/idempotency/adapters/express";
import { idempotencyPlugin } from "@/blocks/idempotency/adapters/fastify";
import { withIdempotency } from "@/blocks/idempotency/adapters/fetch";
import { idempotency as honoIdempotency } from "@/blocks/idempotency/adapters/hono";
import { idempotent as koaIdempotent } from "@/blocks/idempotency/adapters/koa";
import { IDEMPOTENCY_HANDLER, Idempotent, IdempotencyInterceptor } from "@/blocks/idempotency/adapters/nestjs";
import { deferred } from "@/blocks/idempotency/testing/deferred";
import { requestId } from "@/blocks/logger/adapters/hono";
import { captureLogs } from "@/blocks/logger/testing/capture-logs";
import { withRateLimit } from "@/blocks/rate-limiter/adapters/fetch";
import { rateLimit as koaRateLimit } from "@/blocks/rate-limiter/adapters/koa";
import { RATE_LIMITERS, RateLimit, RateLimitInterceptor } from "@/blocks/rate-limiter/adapters/nestjs";
import { RateLimiter } from "@/blocks/rate-limiter/limiter";
import { MemoryRateLimitStore } from "@/blocks/rate-limiter/stores/memory-store";
import { answerOf, serveDuringSuite } from "./support/http";
import { expectProblem, type Answer } from "./support/scenarios";

const json = { "content-type": "application/json" };

describe("fastify: problemDetailsPlugin with formatAnsweredErrors", () => {
  const { logger, lines } = captureLogs();
  const app = Fastify({ genReqId: () => crypto.randomUUID() });
  let release = deferred();
  let entered = deferred();

  beforeAll(async () => {
    await app.register(problemDetailsPlugin, { logger, formatAnsweredErrors: true });
    await app.register(idempotencyPlugin, {
      handler: new IdempotencyHandler(new MemoryStore()),
      getUserId: () => "u_1",
    });
    app.post("/payments", { config: { idempotency: { requireKey: true } } }, async (request, reply) => {
      entered.resolve();
      await release.promise;
      return reply.code(201).send({ id: "pay_1", amount: (request.body as { amount: number }).amount });
    });
    app.post("/orders", async (_request, reply) =>
      reply.code(409).send({ error: { code: "OUT_OF_STOCK", message: "Sold out." } }),
    );
  });
  afterAll(() => app.close());

  const post = async (url: string, key: string | undefined, amount: number): Promise<Answer> => {
    const res = await app.inject({
      method: "POST",
      url,
      headers: { ...json, ...(key ? { "idempotency-key": key } : {}) },
      payload: { amount },
    });
    const headers = Object.fromEntries(
      Object.entries(res.headers).map(([name, value]) => [name, value === undefined ? undefined : String(value)]),
    );
    return { status: res.statusCode, headers, text: res.body };
  };

  it("sends KEY_REUSED_WITH_DIFFERENT_REQUEST as a 409 problem", async () => {
    release.resolve();
    expect((await post("/payments", "key-reuse", 100)).status).toBe(201);
    const body = expectProblem(await post("/payments", "key-reuse", 999), lines, {
      status: 409,
      code: "KEY_REUSED_WITH_DIFFERENT_REQUEST",
    });
    expect(body.instance).toBe("/payments");
  });

  it("sends REQUEST_IN_PROGRESS as a 409 problem with the adapter's Retry-After", async () => {
    release = deferred();
    entered = deferred();
    const first = post("/payments", "key-in-progress", 100);
    await entered.promise;
    const answer = await post("/payments", "key-in-progress", 100);
    expectProblem(answer, lines, { status: 409, code: "REQUEST_IN_PROGRESS" });
    expect(answer.headers["retry-after"]).toBe("1");
    release.resolve();
    expect((await first).status).toBe(201);
  });

  it("sends IDEMPOTENCY_KEY_MISSING as a 400 problem", async () => {
    expectProblem(await post("/payments", undefined, 100), lines, { status: 400, code: "IDEMPOTENCY_KEY_MISSING" });
  });

  it("leaves a route's own error body alone when its code is not in the table", async () => {
    const answer = await post("/orders", undefined, 1);
    expect(answer.headers["content-type"]).toMatch(/^application\/json/);
    expect(JSON.parse(answer.text)).toEqual({ error: { code: "OUT_OF_STOCK", message: "Sold out." } });
  });
});

describe("hono: problemDetails().formatAnsweredErrors", () => {
  const { logger, lines } = captureLogs();
  const app = new Hono();
  const problems = honoProblemDetails({ logger });
  app.onError(problems.onError);
  app.notFound(problems.notFound);
  app.use(requestId());
  app.use(problems.formatAnsweredErrors);
  app.post(
    "/payments",
    honoIdempotency(new IdempotencyHandler(new MemoryStore()), { getUserId: () => "u_1" }),
    async (c) => {
      const { amount } = await c.req.json<{ amount: number }>();
      return c.json({ id: "pay_1", amount }, 201);
    },
  );

  const post = async (key: string, body: string): Promise<Answer> => {
    return answerOf(
      await app.request("/payments", { method: "POST", headers: { ...json, "idempotency-key": key }, body }),
    );
  };

  it("sends KEY_REUSED_WITH_DIFFERENT_REQUEST as a 409 problem, under the logger block's request id", async () => {
    expect((await post("key-reuse", '{"amount":100}')).status).toBe(201);
    const answer = await post("key-reuse", '{"amount":999}');
    const body = expectProblem(answer, lines, { status: 409, code: "KEY_REUSED_WITH_DIFFERENT_REQUEST" });
    expect(answer.headers["x-request-id"]).toBe(body.requestId);
  });

  it("sends the adapter's IDEMPOTENCY_PAYLOAD_INVALID (a malformed body) as a 400 problem", async () => {
    expectProblem(await post("key-bad-body", '{"amount":'), lines, {
      status: 400,
      code: "IDEMPOTENCY_PAYLOAD_INVALID",
    });
  });
});

describe('express: the idempotency route\'s errors: "throw" hands its errors to problemDetails().onError', () => {
  const { logger, lines } = captureLogs();
  let release = deferred();
  let entered = deferred();
  const app = express();
  app.post(
    "/payments",
    express.json(),
    expressIdempotent(new IdempotencyHandler(new MemoryStore()), {
      getUserId: () => "u_1",
      errors: "throw",
      run: async (req) => {
        entered.resolve();
        await release.promise;
        return { status: 201, body: req.body };
      },
    }),
  );
  const problems = expressProblemDetails({ logger });
  app.use(problems.notFound);
  app.use(problems.onError);
  const baseUrl = serveDuringSuite(() => app.listen(0, "127.0.0.1"));

  const post = async (key: string, amount: number): Promise<Answer> =>
    answerOf(
      await fetch(`${baseUrl()}/payments`, {
        method: "POST",
        headers: { ...json, "idempotency-key": key },
        body: JSON.stringify({ amount }),
      }),
    );

  it("sends KEY_REUSED_WITH_DIFFERENT_REQUEST as a 409 problem", async () => {
    release.resolve();
    expect((await post("key-reuse", 100)).status).toBe(201);
    expect(
      expectProblem(await post("key-reuse", 999), lines, { status: 409, code: "KEY_REUSED_WITH_DIFFERENT_REQUEST" })
        .instance,
    ).toBe("/payments");
  });

  it("sends REQUEST_IN_PROGRESS as a 409 problem with the idempotency block's Retry-After", async () => {
    release = deferred();
    entered = deferred();
    const first = post("key-in-progress", 100);
    await entered.promise;
    const answer = await post("key-in-progress", 100);
    expectProblem(answer, lines, { status: 409, code: "REQUEST_IN_PROGRESS" });
    expect(answer.headers["retry-after"]).toBe("1");
    release.resolve();
    expect((await first).status).toBe(201);
  });
});

describe("fetch: withProblems() around withRateLimit and withIdempotency", () => {
  const { logger, lines } = captureLogs();
  const problems = withProblems({ logger });
  const limiter = new RateLimiter(new MemoryRateLimitStore(), { name: "lock", limit: 2, windowMs: 60_000 });
  const payments = problems(
    withRateLimit(
      limiter,
      { getUserId: () => "u_1", getRoute: () => "POST /payments", keyBy: "idempotencyKey" },
      withIdempotency(
        new IdempotencyHandler(new MemoryStore()),
        { getUserId: () => "u_1", getOperation: () => "POST /payments" },
        async (request: Request) => Response.json(await request.json(), { status: 201 }),
      ),
    ),
  );
  const orders = problems(async () =>
    Response.json({ error: { code: "OUT_OF_STOCK", message: "Sold out." } }, { status: 409 }),
  );
  const broken = problems(async () => {
    throw new Error("connect ECONNREFUSED postgres://app:hunter2@db/prod");
  });

  const post = async (
    route: (request: Request, context: unknown) => Response | Promise<Response>,
    key: string,
    amount: number,
  ): Promise<Answer> =>
    answerOf(
      await route(
        new Request("https://api.example.com/payments", {
          method: "POST",
          headers: { ...json, "idempotency-key": key },
          body: JSON.stringify({ amount }),
        }),
        {},
      ),
    );

  it("sends KEY_REUSED_WITH_DIFFERENT_REQUEST as a 409 problem", async () => {
    expect((await post(payments, "key-reuse", 100)).status).toBe(201);
    expect(
      expectProblem(await post(payments, "key-reuse", 999), lines, {
        status: 409,
        code: "KEY_REUSED_WITH_DIFFERENT_REQUEST",
      }).instance,
    ).toBe("/payments");
  });

  it("sends the rate limiter's RATE_LIMITED as a 429 problem, its Retry-After and RateLimit headers kept", async () => {
    await post(payments, "key-storm", 100);
    await post(payments, "key-storm", 100);
    const answer = await post(payments, "key-storm", 100);
    expectProblem(answer, lines, { status: 429, code: "RATE_LIMITED" });
    expect(answer.headers).toMatchObject({
      "retry-after": "30",
      "ratelimit-policy": '"lock";q=2;w=60',
      ratelimit: '"lock";r=0;t=30',
    });
  });

  it("leaves a route's own error body alone when its code is not in the table", async () => {
    const answer = await post(orders, "key-order", 1);
    expect(JSON.parse(answer.text)).toEqual({ error: { code: "OUT_OF_STOCK", message: "Sold out." } });
  });

  it("answers what the handler throws as a 500 problem without its secret", async () => {
    const answer = await post(broken, "key-broken", 1);
    expectProblem(answer, lines, { status: 500, code: "INTERNAL_ERROR" });
    expect(answer.text).not.toContain("hunter2");
  });
});

describe("koa: problemDetails({ formatAnsweredErrors: true })", () => {
  const { logger, lines } = captureLogs();
  const app = new Koa();
  app.use(koaProblemDetails({ logger, formatAnsweredErrors: true }));
  const router = new Router();
  const readJson: Koa.Middleware = async (ctx, next) => {
    let text = "";
    for await (const chunk of ctx.req) text += String(chunk);
    (ctx.request as { body?: unknown }).body = JSON.parse(text);
    await next();
  };
  const limiter = new RateLimiter(new MemoryRateLimitStore(), { name: "lock", limit: 2, windowMs: 60_000 });
  router.post(
    "/payments",
    readJson,
    koaRateLimit(limiter, { getUserId: () => "u_1", keyBy: "idempotencyKey" }),
    koaIdempotent(new IdempotencyHandler(new MemoryStore()), {
      getUserId: () => "u_1",
      run: (ctx) => ({ status: 201, body: (ctx.request as { body?: unknown }).body }),
    }),
  );
  router.post("/orders", (ctx) => {
    ctx.status = 409;
    ctx.body = { error: { code: "OUT_OF_STOCK", message: "Sold out." } };
  });
  app.use(router.routes());
  const baseUrl = serveDuringSuite(() => app.listen(0, "127.0.0.1"));

  const post = async (path: string, key: string, amount: number): Promise<Answer> => {
    return answerOf(
      await fetch(`${baseUrl()}${path}`, {
        method: "POST",
        headers: { ...json, "idempotency-key": key },
        body: JSON.stringify({ amount }),
      }),
    );
  };

  it("sends KEY_REUSED_WITH_DIFFERENT_REQUEST as a 409 problem", async () => {
    expect((await post("/payments", "key-reuse", 100)).status).toBe(201);
    expect(
      expectProblem(await post("/payments", "key-reuse", 999), lines, {
        status: 409,
        code: "KEY_REUSED_WITH_DIFFERENT_REQUEST",
      }).instance,
    ).toBe("/payments");
  });

  it("sends the rate limiter's RATE_LIMITED as a 429 problem, its Retry-After and RateLimit headers kept", async () => {
    await post("/payments", "key-storm", 100);
    await post("/payments", "key-storm", 100);
    const answer = await post("/payments", "key-storm", 100);
    expectProblem(answer, lines, { status: 429, code: "RATE_LIMITED" });
    expect(answer.headers).toMatchObject({
      "retry-after": "30",
      "ratelimit-policy": '"lock";q=2;w=60',
      ratelimit: '"lock";r=0;t=30',
    });
  });

  it("leaves a route's own error body alone when its code is not in the table", async () => {
    const answer = await post("/orders", "key-order", 1);
    expect(answer.headers["content-type"]).toMatch(/^application\/json/);
    expect(JSON.parse(answer.text)).toEqual({ error: { code: "OUT_OF_STOCK", message: "Sold out." } });
  });
});

describe("nestjs: ProblemDetailsFilter over the idempotency and rate-limiter interceptors", () => {
  const { logger, lines } = captureLogs();

  @Controller("payments")
  class PaymentsController {
    @Post()
    @HttpCode(201)
    @Idempotent({ getUserId: () => "u_1" })
    @RateLimit("lock", { getUserId: () => "u_1", keyBy: "idempotencyKey" })
    create(@Body() body: { amount: number }) {
      return body;
    }
  }

  @Module({
    controllers: [PaymentsController],
    providers: [
      { provide: IDEMPOTENCY_HANDLER, useValue: new IdempotencyHandler(new MemoryStore()) },
      {
        provide: RATE_LIMITERS,
        useValue: { lock: new RateLimiter(new MemoryRateLimitStore(), { name: "lock", limit: 2, windowMs: 60_000 }) },
      },
      // The limiter first: a refused retry never reaches the idempotency store.
      { provide: APP_INTERCEPTOR, useClass: RateLimitInterceptor },
      { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
      { provide: APP_FILTER, useValue: new ProblemDetailsFilter({ logger }) },
    ],
  })
  class AppModule {}

  let app: INestApplication;
  let baseUrl = "";
  beforeAll(async () => {
    app = await NestFactory.create(AppModule, { logger: false });
    await app.listen(0, "127.0.0.1");
    baseUrl = (await app.getUrl()).replace("[::1]", "127.0.0.1");
  });
  afterAll(() => app.close());

  const post = async (key: string, amount: number): Promise<Answer> => {
    return answerOf(
      await fetch(`${baseUrl}/payments`, {
        method: "POST",
        headers: { ...json, "idempotency-key": key },
        body: JSON.stringify({ amount }),
      }),
    );
  };

  it("sends KEY_REUSED_WITH_DIFFERENT_REQUEST as a 409 problem", async () => {
    expect((await post("key-reuse", 100)).status).toBe(201);
    expectProblem(await post("key-reuse", 999), lines, { status: 409, code: "KEY_REUSED_WITH_DIFFERENT_REQUEST" });
  });

  it("sends RATE_LIMITED as a 429 problem with the limiter's headers", async () => {
    await post("key-storm", 100);
    await post("key-storm", 100);
    const answer = await post("key-storm", 100);
    expectProblem(answer, lines, { status: 429, code: "RATE_LIMITED" });
    expect(answer.headers).toMatchObject({ "retry-after": "30", "ratelimit-policy": '"lock";q=2;w=60' });
  });
});
