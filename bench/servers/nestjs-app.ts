// The NestJS app for a spec, on the Express platform (`nestjs`) or the Fastify one (`nestjs-fastify`):
// the bare controller, the bare controller behind an interceptor that does nothing (what Nest's interceptor
// machinery costs by itself), or the same controller with `@Idempotent()` and the IdempotencyInterceptor.
import "reflect-metadata";
import type { Server } from "node:http";
import {
  Body,
  Controller,
  HttpCode,
  Injectable,
  Module,
  Post,
  type CallHandler,
  type NestInterceptor,
  type Type,
} from "@nestjs/common";
import { APP_INTERCEPTOR, NestFactory } from "@nestjs/core";
import { FastifyAdapter } from "@nestjs/platform-fastify";
import { IDEMPOTENCY_HANDLER, Idempotent, IdempotencyInterceptor } from "@/blocks/idempotency/adapters/nestjs";
import type { Closable } from "./block-handler";
import { blockHandler } from "./block-handler";
import { charge, type PaymentBody } from "./payment";
import { ROUTE, type ServerSpec } from "./spec";

const PATH = ROUTE.slice(1);

@Controller(PATH)
class BareController {
  @Post()
  @HttpCode(201)
  create(@Body() body: PaymentBody) {
    return charge(body);
  }
}

@Controller(PATH)
class BlockController {
  @Post()
  @HttpCode(201)
  @Idempotent({ getUserId: () => "u_bench" })
  create(@Body() body: PaymentBody) {
    return charge(body);
  }
}

/** Only passes the call on: the floor of any interceptor, ours included. */
@Injectable()
class NoopInterceptor implements NestInterceptor {
  intercept(_context: unknown, next: CallHandler) {
    return next.handle();
  }
}

async function appModule(spec: ServerSpec): Promise<{ module: Type } & Closable> {
  if (spec.variant === "bare") {
    @Module({ controllers: [BareController] })
    class BareModule {}
    return { module: BareModule, close: async () => {} };
  }
  if (spec.variant === "noop-interceptor") {
    @Module({ controllers: [BareController], providers: [{ provide: APP_INTERCEPTOR, useClass: NoopInterceptor }] })
    class NoopInterceptorModule {}
    return { module: NoopInterceptorModule, close: async () => {} };
  }
  if (spec.variant !== "block") throw new Error(`No NestJS ${spec.variant} server.`);
  const { handler, close } = await blockHandler(spec);
  @Module({
    controllers: [BlockController],
    providers: [
      { provide: IDEMPOTENCY_HANDLER, useValue: handler },
      { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
    ],
  })
  class BlockModule {}
  return { module: BlockModule, close };
}

export async function nestServer(spec: ServerSpec): Promise<{ server: Server } & Closable> {
  const { module, close } = await appModule(spec);
  const app =
    spec.framework === "nestjs-fastify"
      ? await NestFactory.create(module, new FastifyAdapter(), { logger: false })
      : await NestFactory.create(module, { logger: false });
  await app.listen(0, "127.0.0.1");
  return { server: app.getHttpServer() as Server, close: async () => (await app.close(), await close()) };
}
