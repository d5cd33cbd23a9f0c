// NestJS 11 adapter: `@RateLimit(name)` marks a route, `RateLimitInterceptor` limits it after the guards ran.
import {
  HttpException,
  Inject,
  Injectable,
  SetMetadata,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from "@nestjs/common";
import { Reflector } from "@nestjs/core";
import type { Observable } from "rxjs";
import type { RateLimiter } from "../limiter";
import { limitRoute, type FrameworkDefaults, type RateLimitRouteOptions } from "../http/limit-route";
import { routeTemplateOf, userIdOf } from "./route-and-user-nestjs";

/** The DI token of your limiters, by name: `{ payments: new RateLimiter(store, { name: "payments", ... }) }`. */
export const RATE_LIMITERS = "RateLimiters";

const RATE_LIMITED_ROUTE = "rate-limiter:route";

/** What the interceptor reads from the request of either platform (Express or Fastify). */
export type NestHttpRequest = {
  method: string;
  headers: Record<string, string | string[] | undefined>;
  /** Both platforms' requests carry the socket. */
  socket?: { remoteAddress?: string | undefined };
  /** Set by the app's guard (Passport sets `request.user`). */
  user?: unknown;
  /** Express: the matched route, below `baseUrl`. */
  route?: { path?: string };
  baseUrl?: string;
  /** Fastify: the matched route's options. */
  routeOptions?: { url?: string };
};

export type NestRateLimitOptions<Req extends object = NestHttpRequest> = RateLimitRouteOptions<Req>;

type RateLimitedRoute = { limiter: string; options: NestRateLimitOptions };

/** The one response call both platforms share (Express `Response`, Fastify `FastifyReply`). */
type PlatformResponse = { header(name: string, value: string): unknown };

const nestDefaults: FrameworkDefaults<NestHttpRequest> = {
  userIdOf,
  // The socket: the limiter's `trustProxy` counts hops, whatever the platform's trust-proxy setting says.
  peerOf: (request) => request.socket?.remoteAddress,
  // The route's template on either platform, global prefix included; `*` where neither shows one.
  routeOf: (request) => `${request.method} ${routeTemplateOf(request) ?? "*"}`,
  headerOf: (request, name) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value[0] : value;
  },
};

/**
 * Limits a route (or every route of a controller) with the limiter of that name in `RATE_LIMITERS`.
 *
 * @example
 * @Post()
 * @UseGuards(AuthGuard)
 * @RateLimit("payments")
 * create(@Body() body: CreatePaymentDto) { ... }
 *
 * @RateLimit("lock", { keyBy: "idempotencyKey" }) // the idempotency lock path
 */
export function RateLimit<Req extends object = NestHttpRequest>(
  limiter: string,
  options: NestRateLimitOptions<Req> = {},
): MethodDecorator & ClassDecorator {
  return SetMetadata(RATE_LIMITED_ROUTE, { limiter, options } as RateLimitedRoute);
}

/**
 * Limits the routes marked `@RateLimit()`. Interceptors run after guards, so the user your auth
 * guard sets is the caller, and before pipes, so a refused request costs no validation. A refused
 * request becomes an `HttpException` with the block's status and body (429 `RATE_LIMITED`), its
 * headers already on the response: your exception filters format it as any other.
 *
 * @example
 * @Module({
 *   providers: [
 *     { provide: RATE_LIMITERS, useFactory: (redis: Redis) => ({ payments: new RateLimiter(new RedisRateLimitStore(redis), { name: "payments", limit: 10, windowMs: 60_000 }) }), inject: [REDIS] },
 *     { provide: APP_INTERCEPTOR, useClass: RateLimitInterceptor },
 *   ],
 * })
 * export class AppModule {}
 */
@Injectable()
export class RateLimitInterceptor implements NestInterceptor {
  readonly #limiters: Readonly<Record<string, RateLimiter>>;
  readonly #reflector: Reflector;
  readonly #routes = new WeakMap<RateLimitedRoute, ReturnType<typeof limitRoute<NestHttpRequest>>>();

  constructor(@Inject(RATE_LIMITERS) limiters: Record<string, RateLimiter>, @Inject(Reflector) reflector: Reflector) {
    this.#limiters = limiters;
    this.#reflector = reflector;
  }

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const route = this.#reflector.getAllAndOverride<RateLimitedRoute | undefined>(RATE_LIMITED_ROUTE, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!route || context.getType() !== "http") return next.handle();
    const outcome = await this.#limit(route)(context.switchToHttp().getRequest<NestHttpRequest>());
    const response = context.switchToHttp().getResponse<PlatformResponse>();
    for (const [name, value] of Object.entries(outcome.headers)) response.header(name, value);
    if (outcome.kind === "send") throw new HttpException(JSON.parse(outcome.body) as object, outcome.status);
    return next.handle();
  }

  #limit(route: RateLimitedRoute) {
    let limit = this.#routes.get(route);
    if (!limit) {
      const limiter = this.#limiters[route.limiter];
      if (!limiter)
        throw new Error(
          `rate-limiter: @RateLimit("${route.limiter}") names no limiter in RATE_LIMITERS (it has: ${Object.keys(this.#limiters).join(", ") || "none"}).`,
        );
      limit = limitRoute(limiter, route.options, nestDefaults);
      this.#routes.set(route, limit);
    }
    return limit;
  }
}
