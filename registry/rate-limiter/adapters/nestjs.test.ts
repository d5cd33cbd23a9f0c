// Route tests for the NestJS adapter on a real app (Express platform) with a guard that sets request.user: copy them next to your own.
import {
  Controller,
  Headers,
  HttpCode,
  Injectable,
  Module,
  Param,
  Post,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
} from "@nestjs/common";
import { APP_INTERCEPTOR, NestFactory } from "@nestjs/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { RateLimiter } from "../limiter";
import { MemoryRateLimitStore } from "../stores/memory-store";
import { RATE_LIMITERS, RateLimit, RateLimitInterceptor, type NestHttpRequest } from "./nestjs";

/** Your auth guard goes here (Passport's AuthGuard sets request.user the same way); this one trusts a header. */
@Injectable()
class HeaderAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<NestHttpRequest>();
    request.user = { id: String(request.headers["x-user"] ?? "anonymous") };
    return true;
  }
}

@Controller()
@UseGuards(HeaderAuthGuard)
class PaymentsController {
  @Post("payments/:id")
  @HttpCode(201)
  @RateLimit("payments")
  pay(@Param("id") id: string) {
    return { id };
  }

  @Post("orders")
  @HttpCode(201)
  @RateLimit("lock", { keyBy: "idempotencyKey" })
  order(@Headers("idempotency-key") key: string | undefined) {
    return { id: "ord_1", key };
  }
}

// Use your own store (RedisRateLimitStore, PostgresRateLimitStore) to test the setup you deploy.
const store = new MemoryRateLimitStore();

@Module({
  controllers: [PaymentsController],
  providers: [
    {
      provide: RATE_LIMITERS,
      useValue: {
        payments: new RateLimiter(store, { name: "payments", limit: 2, windowMs: 60_000 }),
        lock: new RateLimiter(store, { name: "lock", limit: 2, windowMs: 60_000 }),
      },
    },
    { provide: APP_INTERCEPTOR, useClass: RateLimitInterceptor },
  ],
})
class AppModule {}

let app: INestApplication;
let base: string;
beforeAll(async () => {
  app = await NestFactory.create(AppModule, { logger: false });
  await app.listen(0, "127.0.0.1");
  base = (await app.getUrl()).replace("[::1]", "127.0.0.1");
});
afterAll(() => app.close());

const post = (path: string, headers: Record<string, string>) => fetch(`${base}${path}`, { method: "POST", headers });

it("lets requests through with the RateLimit headers, then answers 429 RATE_LIMITED with Retry-After", async () => {
  const first = await post("/payments/p_1", { "x-user": "u_1" });
  expect(first.status).toBe(201);
  expect(first.headers.get("ratelimit-policy")).toBe('"payments";q=2;w=60');
  expect(first.headers.get("ratelimit")).toBe('"payments";r=1;t=30');
  await post("/payments/p_2", { "x-user": "u_1" });

  // Another id, the same route template: the same quota.
  const refused = await post("/payments/p_3", { "x-user": "u_1" });
  expect(refused.status).toBe(429);
  expect(refused.headers.get("retry-after")).toBe("30");
  expect(refused.headers.get("ratelimit")).toBe('"payments";r=0;t=30');
  expect(await refused.json()).toEqual({ error: { code: "RATE_LIMITED", message: "Too many requests: retry later." } });
});

it("gives every user (the one the guard set) their own quota", async () => {
  expect((await post("/payments/p_1", { "x-user": "u_2" })).status).toBe(201);
});

it("keyBy idempotencyKey: caps one key's retries, leaves other keys and keyless requests alone", async () => {
  const retry = () => post("/orders", { "x-user": "u_1", "idempotency-key": "k-1" });
  expect([(await retry()).status, (await retry()).status, (await retry()).status]).toEqual([201, 201, 429]);
  expect((await post("/orders", { "x-user": "u_1", "idempotency-key": "k-2" })).status).toBe(201);
  expect((await post("/orders", { "x-user": "u_1" })).status).toBe(201);
});
