// Route tests for the NestJS adapter on a real app (Express platform) with a guard that sets request.user: copy them next to your own.
import { randomUUID } from "node:crypto";
import {
  Body,
  Controller,
  HttpCode,
  Inject,
  Injectable,
  Module,
  Post,
  UnprocessableEntityException,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
} from "@nestjs/common";
import { APP_INTERCEPTOR, NestFactory } from "@nestjs/core";
import { afterEach, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "../handler";
import { MemoryStore } from "../testing/memory-store";
import { IDEMPOTENCY_HANDLER, Idempotent, IdempotencyInterceptor, type NestHttpRequest } from "./nestjs";

type AuthedRequest = NestHttpRequest & { user: { id: string } };

/** Your auth guard goes here (Passport's AuthGuard sets request.user the same way); this one trusts a header. */
@Injectable()
class HeaderAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AuthedRequest>();
    request.user = { id: String(request.headers["x-user-id"]) };
    return true;
  }
}

/** The payment service the route calls: it records each charge, and can hold one to send a duplicate meanwhile. */
class Payments {
  readonly charges: number[] = [];
  #hold: Promise<void> | undefined;
  #charging: () => void = () => {};
  release: () => void = () => {};

  holdCharge(): Promise<void> {
    this.#hold = new Promise<void>((resolve) => (this.release = resolve));
    return new Promise<void>((resolve) => (this.#charging = resolve));
  }

  async charge(amount: number): Promise<{ id: string; amount: number }> {
    if (amount > 500) throw new UnprocessableEntityException("card declined");
    this.charges.push(amount);
    this.#charging();
    await this.#hold;
    return { id: `pay_${this.charges.length}`, amount };
  }
}

@Controller("payments")
@UseGuards(HeaderAuthGuard)
class PaymentsController {
  readonly #payments: Payments;
  constructor(@Inject(Payments) payments: Payments) {
    this.#payments = payments;
  }

  @Post()
  @HttpCode(201)
  @Idempotent({ getUserId: (req: AuthedRequest) => req.user.id, requireKey: true })
  create(@Body() body: { amount: number }) {
    return this.#payments.charge(body.amount);
  }
}

const apps: INestApplication[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function paymentsApp() {
  const payments = new Payments();
  @Module({
    controllers: [PaymentsController],
    providers: [
      { provide: Payments, useValue: payments },
      { provide: IDEMPOTENCY_HANDLER, useValue: new IdempotencyHandler(new MemoryStore()) },
      { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
    ],
  })
  class AppModule {}
  const app = await NestFactory.create(AppModule, { logger: false });
  apps.push(app);
  await app.listen(0, "127.0.0.1");
  const url = `${(await app.getUrl()).replace("[::1]", "127.0.0.1")}/payments`;
  return {
    payments,
    pay: (key: string | undefined, body: object = { amount: 100 }, user = "u_1") =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "x-user-id": user, ...(key ? { "idempotency-key": key } : {}) },
        body: JSON.stringify(body),
      }),
  };
}

describe("POST /payments with @Idempotent", () => {
  it("replays a retry byte for byte, and charges once", async () => {
    const app = await paymentsApp();
    const key = randomUUID();
    const first = await app.pay(key);
    const retry = await app.pay(key);
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(await retry.text()).toBe(await first.text());
    expect(retry.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(app.payments.charges).toEqual([100]);
  });

  it("answers the same key with another payload 409", async () => {
    const app = await paymentsApp();
    const key = randomUUID();
    await app.pay(key, { amount: 100 });
    const reused = await app.pay(key, { amount: 999 });
    expect(reused.status).toBe(409);
    expect(await reused.json()).toEqual({
      error: { code: "KEY_REUSED_WITH_DIFFERENT_REQUEST", message: expect.any(String) as unknown },
    });
    expect(app.payments.charges).toEqual([100]);
  });

  it("answers a duplicate sent while the first runs 409 with Retry-After, and charges once", async () => {
    const app = await paymentsApp();
    const charging = app.payments.holdCharge();
    const key = randomUUID();
    const first = app.pay(key);
    await charging;
    const duplicate = await app.pay(key);
    app.payments.release();
    expect(duplicate.status).toBe(409);
    expect(duplicate.headers.get("retry-after")).toBe("1");
    expect(await duplicate.json()).toMatchObject({ error: { code: "REQUEST_IN_PROGRESS" } });
    expect((await first).status).toBe(201);
    expect(app.payments.charges).toEqual([100]);
  });

  it("answers a request without a key 400", async () => {
    const app = await paymentsApp();
    const response = await app.pay(undefined);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: "IDEMPOTENCY_KEY_MISSING" } });
    expect(app.payments.charges).toEqual([]);
  });

  it("keeps users apart: the same key from another user is another payment", async () => {
    const app = await paymentsApp();
    const key = randomUUID();
    await app.pay(key, { amount: 100 }, "u_1");
    expect((await app.pay(key, { amount: 100 }, "u_2")).status).toBe(201);
    expect(app.payments.charges).toEqual([100, 100]);
  });

  it("fails the key when the route throws a 4xx HttpException: the retry gets 409 REQUEST_FAILED", async () => {
    const app = await paymentsApp();
    const key = randomUUID();
    expect((await app.pay(key, { amount: 900 })).status).toBe(422);
    const retry = await app.pay(key, { amount: 900 });
    expect(retry.status).toBe(409);
    expect(await retry.json()).toMatchObject({ error: { code: "REQUEST_FAILED" } });
  });
});
