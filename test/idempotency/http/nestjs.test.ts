// The HTTP conformance suite on NestJS 11, on the Express and the Fastify platform, through a real listener on port 0.
import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import {
  Catch,
  Controller,
  Delete,
  Get,
  HttpException,
  Module,
  Patch,
  Post,
  Put,
  Res,
  StreamableFile,
  UseInterceptors,
  type ArgumentsHost,
  type CanActivate,
  type ExceptionFilter,
  type ExecutionContext,
  type INestApplication,
} from "@nestjs/common";
import { APP_INTERCEPTOR, NestFactory } from "@nestjs/core";
import { FastifyAdapter } from "@nestjs/platform-fastify";
import { afterEach, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import {
  RouteError,
  isPermanentRouteError,
  runHttpConformance,
  testResponse,
  toFetchRequest,
  type HttpDriver,
  type RouteReply,
  type TestApp,
  type TestRoute,
} from "../support/http-conformance";
import {
  IDEMPOTENCY_HANDLER,
  Idempotent,
  IdempotencyInterceptor,
  RunContext,
  type NestHttpRequest,
} from "@/blocks/idempotency/adapters/nestjs";
import type { RouteContext } from "@/blocks/idempotency/http/route-options";

type Platform = "express" | "fastify";
/** What the test routes call on either platform's response (Express `Response`, Fastify `FastifyReply`). */
type PlatformResponse = { status(code: number): unknown; header(name: string, value: string): unknown };
type AuthedRequest = NestHttpRequest & { user: { id: string } };

/**
 * Nest has one style, an interceptor for the routes marked @Idempotent. The suite's two styles are
 * its two registrations: "wrapper" = a global APP_INTERCEPTOR;
 * "capture" = @UseInterceptors on the route, which throws HttpExceptions as a Nest route does.
 * Both take the route's `isPermanentError`.
 */
function nestDriver(platform: Platform): HttpDriver {
  return {
    captureSeesThrownErrors: true,
    async start({ handler, style, routes }) {
      const contexts = new Map<string, NestHttpRequest>();
      @Module({
        controllers: routes.map((route) => routeController(route, style)),
        providers: [
          { provide: IDEMPOTENCY_HANDLER, useValue: handler },
          ...(style === "wrapper" ? [{ provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor }] : []),
        ],
      })
      class AppModule {}
      return listen(await createApp(AppModule, platform), contexts);
    },
  };
}

function routeController(route: TestRoute, style: "wrapper" | "capture") {
  const options = {
    ...route.options,
    ...(route.defaultUserId ? {} : { getUserId: (req: AuthedRequest) => req.user.id }),
    // Capture style sees the HttpException the route threw; the RouteError it wraps says whether it is permanent.
    isPermanentError: (err: unknown) => isPermanentRouteError(err instanceof HttpException ? err.cause : err),
  };
  const Method = { POST: Post, PUT: Put, PATCH: Patch, DELETE: Delete }[route.method ?? "POST"];

  @Controller()
  class RouteController {
    @Method(route.path)
    @Idempotent(options)
    @UseInterceptors(...(style === "capture" ? [IdempotencyInterceptor] : []))
    async handle(
      @Res({ passthrough: true }) res: PlatformResponse,
      @RunContext() ctx?: RouteContext,
    ): Promise<unknown> {
      let reply: RouteReply;
      try {
        reply = await route.logic(ctx);
      } catch (err) {
        if (style === "capture" && err instanceof RouteError)
          throw new HttpException(err.message, err.status, { cause: err });
        throw err;
      }
      res.status(reply.status ?? 200);
      for (const [name, value] of Object.entries(reply.headers ?? {})) res.header(name, value);
      if (reply.stream) return new StreamableFile(Readable.from(reply.stream));
      return reply.body;
    }
  }
  return RouteController;
}

/** The guard sets `request.user` (as Passport does); interceptors run after it. */
class AuthGuard implements CanActivate {
  readonly contexts: Map<string, NestHttpRequest>;
  constructor(contexts: Map<string, NestHttpRequest>) {
    this.contexts = contexts;
  }
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<NestHttpRequest & { user?: { id: string } }>();
    this.contexts.set(String(request.headers["x-test-id"]), request);
    const id = request.headers["x-user-id"];
    if (typeof id === "string") request.user = { id };
    return true;
  }
}

/** Answers HttpExceptions as Nest does, and any other error with `err.status ?? 500` and `{ frameworkError }`. */
@Catch()
class FrameworkErrorFilter implements ExceptionFilter {
  catch(err: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<{ status(code: number): { send(body: unknown): void } }>();
    if (err instanceof HttpException) return response.status(err.getStatus()).send(err.getResponse());
    const { status, message } = err as { status?: number; message: string };
    response.status(status ?? 500).send({ frameworkError: message });
  }
}

async function createApp(
  module: Parameters<typeof NestFactory.create>[0],
  platform: Platform,
): Promise<INestApplication> {
  const options = { logger: false as const };
  return platform === "express"
    ? NestFactory.create(module, options)
    : NestFactory.create(module, new FastifyAdapter(), options);
}

async function listen(app: INestApplication, contexts: Map<string, NestHttpRequest>): Promise<TestApp> {
  app.useGlobalGuards(new AuthGuard(contexts));
  app.useGlobalFilters(new FrameworkErrorFilter());
  await app.listen(0, "127.0.0.1");
  const base = (await app.getUrl()).replace("[::1]", "127.0.0.1");
  return {
    async request(request) {
      const { path, testId, init } = toFetchRequest(request);
      const response = await fetch(base + path, init);
      const body = Buffer.from(await response.arrayBuffer());
      return testResponse(response.status, response.headers, body, contexts.get(testId)?.idempotency);
    },
    async close() {
      (app.getHttpServer() as { closeAllConnections(): void }).closeAllConnections();
      await app.close();
    },
  };
}

describe.each<Platform>(["express", "fastify"])("%s platform", (platform) => {
  runHttpConformance(nestDriver(platform));

  describe("Nest", () => {
    const apps: TestApp[] = [];
    afterEach(async () => void (await Promise.all(apps.splice(0).map((app) => app.close()))));

    it("names the operation after the route template, global prefix included", async () => {
      @Controller("orders")
      class OrdersController {
        @Post(":id/refunds")
        @Idempotent({ getUserId: () => "u_1" })
        refund(): object {
          return { refunded: true };
        }
        @Get(":id")
        read(): object {
          return { read: true };
        }
      }
      @Module({
        controllers: [OrdersController],
        providers: [
          { provide: IDEMPOTENCY_HANDLER, useValue: new IdempotencyHandler(new MemoryStore()) },
          { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
        ],
      })
      class OrdersModule {}
      const nest = await createApp(OrdersModule, platform);
      nest.setGlobalPrefix("api");
      const contexts = new Map<string, NestHttpRequest>();
      const app = await listen(nest, contexts);
      apps.push(app);
      const response = await app.request({ key: randomUUID(), path: "/api/orders/o_1/refunds" });
      expect(response.status).toBe(201);
      expect(response.context?.operation).toBe("POST /api/orders/:id/refunds");
    });
  });
});
