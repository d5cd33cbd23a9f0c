// NestJS 11 adapter: `@Idempotent(options)` marks a route, `IdempotencyInterceptor` protects it after the guards ran.
import { Readable } from "node:stream";
import {
  HttpException,
  Inject,
  Injectable,
  SetMetadata,
  StreamableFile,
  createParamDecorator,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from "@nestjs/common";
import { Reflector } from "@nestjs/core";
import { lastValueFrom, of, type Observable } from "rxjs";
import type { IdempotencyHandler } from "../handler";
import { classifyResponseStatus } from "../http/classify-response";
import type { IdempotencyContext } from "../http/context";
import { toHttpResponse, wireBody, type HttpResponse, type RouteResult, type Uncaptured } from "../http/http-response";
import { IDEMPOTENCY_KEY_HEADER } from "../http/key-header";
import { protectRoute, type Protect } from "../http/protect";
import {
  resolveRouteOptions,
  type FrameworkDefaults,
  type RouteContext,
  type WrapperRouteOptions,
} from "../http/route-options";
import { checkTransaction } from "../http/route-transaction";
import { IdempotencySetupError } from "../http/user-id";
import { routeTemplateOf, userIdOf } from "./route-and-user-nestjs";

/** The DI token the interceptor takes its `IdempotencyHandler` from. */
export const IDEMPOTENCY_HANDLER = "IdempotencyHandler";

const IDEMPOTENT_ROUTE = "idempotency:route";

/** What the interceptor reads from the request of either platform (Express or Fastify). */
export type NestHttpRequest = {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
  /** Set by the app's guard (Passport sets `request.user`). */
  user?: unknown;
  /** The decision for this request, set on every request a protected route sees. */
  idempotency?: IdempotencyContext;
  /** Express: the matched route, below `baseUrl`. */
  route?: { path?: string };
  baseUrl?: string;
  originalUrl?: string;
  /** Fastify: the matched route's options. */
  routeOptions?: { url?: string };
};

/** The route options of DESIGN, `isPermanentError` included; `Req` is your platform's request type. */
export type NestRouteOptions<Req extends object = NestHttpRequest> = WrapperRouteOptions<Req>;

/** The response calls both platforms share (Express `Response`, Fastify `FastifyReply`). */
type PlatformResponse = {
  statusCode: number;
  status(code: number): unknown;
  getHeaders(): Record<string, string | number | readonly string[] | undefined>;
  getHeader(name: string): unknown;
  header(name: string, value: string | readonly string[]): unknown;
  setHeader?(name: string, value: string | readonly string[]): unknown;
};

/**
 * What identifies a request, read in one place: the method and the route template (global prefix
 * included) scope the key; the concrete path and query are what the request targets (for the fingerprint).
 */
const nestDefaults: FrameworkDefaults<NestHttpRequest> = {
  userIdOf,
  operationOf: (request) => {
    const routeTemplate = routeTemplateOf(request);
    if (routeTemplate === undefined)
      throw new IdempotencySetupError(
        `idempotency: cannot read the route template of a ${request.method} request; pass \`getOperation\` to @Idempotent.`,
      );
    return `${request.method} ${routeTemplate}`;
  },
  bodyOf: (request) => request.body,
};

/**
 * The routes marked `transaction: true` (`Controller.method`), so the interceptor can refuse a handler
 * that cannot keep them and name them. Recorded when the decorator runs, as the class loads: a
 * controller the app imports but does not mount counts too.
 */
const transactionalRoutes: string[] = [];

/** The idempotency context of each request an `@Idempotent` route is running for, read by `@RunContext()`. */
const runContexts = new WeakMap<object, RouteContext>();

/**
 * Marks a route (or every route of a controller) as idempotent. Its options are checked here,
 * at start-up: in production a route without `getUserId` (or `allowAnonymous`) fails to load.
 * Without `isPermanentError`, a thrown `HttpException` fails the key when its status would
 * (4xx but 408 and 429); any other error frees the key for a retry.
 *
 * @example
 * @Post()
 * @UseGuards(AuthGuard)
 * @Idempotent({ getUserId: (req: AuthedRequest) => req.user.id, requireKey: true })
 * create(@Body() body: CreatePaymentDto) {
 *   return this.payments.charge(body);
 * }
 */
export function Idempotent<Req extends object = NestHttpRequest>(
  options: NestRouteOptions<Req> = {},
): MethodDecorator & ClassDecorator {
  resolveRouteOptions(options, nestDefaults as unknown as FrameworkDefaults<Req>);
  // The store is checked when the interceptor gets its handler; the rest of the option here.
  const transactional = checkTransaction(options, { supportsTransactions: true });
  const mark = SetMetadata(IDEMPOTENT_ROUTE, options);
  return (target: object, method?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (transactional) transactionalRoutes.push(routeName(target, method));
    if (method === undefined) mark(target as () => void);
    else mark(target, method, descriptor as PropertyDescriptor);
  };
}

/** `OrdersController.create` for a method, `OrdersController` for a whole controller. */
function routeName(target: object, method: string | symbol | undefined): string {
  if (method === undefined) return (target as { name?: string }).name ?? "a controller";
  return `${target.constructor.name}.${String(method)}`;
}

/**
 * The route's idempotency context, as `run` gets it in the other adapters: `ctx.signal` aborts if
 * another execution takes the key over; with `@Idempotent({ transaction: true })`, `ctx.tx` is the
 * transaction the route's writes must go through to commit with the record; `ctx.key` is undefined
 * when the request had no key and the route ran unprotected. Undefined on a route without `@Idempotent`.
 *
 * @example
 * @Post()
 * @Idempotent({ getUserId: (req: AuthedRequest) => req.user.id, transaction: true })
 * create(@Body() body: CreateOrderDto, @RunContext() { tx }: TransactionContext<PoolClient>) {
 *   return this.orders.insert(tx, body);
 * }
 */
export const RunContext = createParamDecorator((_data: unknown, context: ExecutionContext) =>
  runContexts.get(context.switchToHttp().getRequest<object>()),
);

/**
 * Protects the routes marked `@Idempotent()`. Interceptors run after guards, so the user a guard
 * sets is the key's scope. Register it first (outermost) so it records what other interceptors
 * (e.g. ClassSerializerInterceptor) made of the route's value; the value is serialized once and
 * those bytes go out, now and on every replay.
 *
 * @example
 * // The handler comes from the wiring (its logger, metrics and jobs), on the app's own client:
 * // the block README's IdempotencyModule also starts the jobs and closes the wiring with the app.
 * @Module({
 *   providers: [
 *     { provide: IDEMPOTENCY_HANDLER, inject: [DataSource], useFactory: (db: DataSource) => createIdempotency({ db }).handler },
 *     { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
 *   ],
 * })
 * export class IdempotencyModule {}
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  readonly #handler: IdempotencyHandler<unknown>;
  readonly #reflector: Reflector;
  /** One flow per options: a controller's `@Idempotent` shares its options with each of its routes. */
  readonly #routes = new WeakMap<object, Protect<NestHttpRequest>>();
  /** Each handler's flow (null: not `@Idempotent`), by class then handler: its metadata is set as the classes load, so it is read once. */
  readonly #handlers = new WeakMap<object, WeakMap<object, Protect<NestHttpRequest> | null>>();

  constructor(
    @Inject(IDEMPOTENCY_HANDLER) handler: IdempotencyHandler<unknown>,
    @Inject(Reflector) reflector: Reflector,
  ) {
    // At start-up (the interceptor is made when the app boots): a transactional route on a store without transactions never serves.
    if (transactionalRoutes.length > 0 && !handler.supportsTransactions) {
      try {
        checkTransaction({ transaction: true }, handler);
      } catch (err) {
        throw new TypeError(
          `${(err as Error).message} Marked \`transaction: true\`: ${transactionalRoutes.join(", ")}.`,
        );
      }
    }
    this.#handler = handler;
    this.#reflector = reflector;
  }

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    if (context.getType() !== "http") return next.handle();
    const protect = this.#protectOf(context.getClass(), context.getHandler());
    if (!protect) return next.handle();
    // As Nest holds them: each `switchToHttp()` would make three closures on the context.
    const [request, response] = context.getArgs<[NestHttpRequest, PlatformResponse]>();
    let value: unknown;
    const verdict = await protect(request, {
      method: request.method,
      url: request.originalUrl ?? request.url,
      keyHeader: request.headers[IDEMPOTENCY_KEY_HEADER],
      hasCredentials: request.headers.authorization !== undefined,
      setContext: (idempotency) => (request.idempotency = idempotency),
      produce: async (ctx) => {
        runContexts.set(request, ctx);
        value = await lastValueFrom(next.handle(), { defaultValue: undefined });
        return responseOf(value, response);
      },
    });
    if (verdict.kind === "error") throw verdict.error;
    if (verdict.kind === "answered") return of(sendFirst(response, verdict.response));
    // A stream or file goes out as Nest sends the route's own value.
    if (verdict.kind === "uncaptured") return of(value);
    if (verdict.kind === "replayed") return of(sendReplay(response, verdict.response));
    // An idempotency decision: a Nest exception, so the app's exception filters format it as they do any other.
    setHeaders(response, verdict.response);
    throw new HttpException(JSON.parse(verdict.response.body.toString("utf8")) as object, verdict.response.status);
  }

  #protectOf(controller: object, handler: object): Protect<NestHttpRequest> | null {
    let handlers = this.#handlers.get(controller);
    if (!handlers) this.#handlers.set(controller, (handlers = new WeakMap()));
    let protect = handlers.get(handler);
    if (protect === undefined) {
      const targets = [handler, controller] as Parameters<Reflector["getAllAndOverride"]>[1];
      const options = this.#reflector.getAllAndOverride<NestRouteOptions | undefined>(IDEMPOTENT_ROUTE, targets);
      handlers.set(handler, (protect = options ? this.#flowOf(options) : null));
    }
    return protect;
  }

  #flowOf(options: NestRouteOptions): Protect<NestHttpRequest> {
    let protect = this.#routes.get(options);
    if (!protect) {
      protect = protectRoute(this.#handler, withHttpExceptions(options), nestDefaults);
      this.#routes.set(options, protect);
    }
    return protect;
  }
}

/** An HttpException fails the key when the same status as a response would; other errors are transient. */
function withHttpExceptions(options: NestRouteOptions): NestRouteOptions {
  const classify = options.classifyResponse ?? classifyResponseStatus;
  const isPermanentError =
    options.isPermanentError ??
    ((err: unknown) => err instanceof HttpException && classify(err.getStatus()) === "permanent");
  return { ...options, isPermanentError };
}

/** Serializes the route's value the way it will go out; a stream or file is never recorded. */
function responseOf(value: unknown, response: PlatformResponse): HttpResponse | Uncaptured {
  if (value instanceof StreamableFile || value instanceof Readable)
    return { uncaptured: "the route returned a stream" };
  return toHttpResponse({
    status: response.statusCode,
    headers: response.getHeaders() as NonNullable<RouteResult["headers"]>,
    body: value,
  });
}

/**
 * The route's first response: its status and headers are on the response already (they were read
 * from it), so only a Content-Type the serialization chose is added before the bytes go out.
 */
function sendFirst(response: PlatformResponse, http: HttpResponse): Buffer | string | StreamableFile | undefined {
  const type = http.headers["content-type"];
  if (type !== undefined && response.getHeader("content-type") === undefined) setHeader(response, "content-type", type);
  return bodyFor(response, http);
}

function sendReplay(response: PlatformResponse, http: HttpResponse): Buffer | string | StreamableFile | undefined {
  setHeaders(response, http);
  return bodyFor(response, http);
}

/**
 * The exact bytes, in the form each platform sends as they are: a string when they are UTF-8 (see
 * `wireBody`), else a Buffer on Fastify; Express would turn a Buffer into JSON, so there they go out
 * as a StreamableFile, whose stream costs more than the route itself.
 */
function bodyFor(response: PlatformResponse, http: HttpResponse): Buffer | string | StreamableFile | undefined {
  if (http.body.length === 0) return undefined;
  const body = wireBody(http.body, http.text);
  if (typeof body === "string" || "raw" in response) return body;
  return new StreamableFile(body, { length: body.length });
}

/** Adds the headers the response lacks: after the route ran it has its own (Fastify would repeat a Set-Cookie set twice). */
function setHeaders(response: PlatformResponse, http: HttpResponse): void {
  response.status(http.status);
  for (const [name, value] of Object.entries(http.headers)) {
    if (response.getHeader(name) === undefined) setHeader(response, name, value);
  }
}

function setHeader(response: PlatformResponse, name: string, value: string | readonly string[]): void {
  // Express's `res.header` would rewrite a Content-Type (adding a charset); `setHeader` keeps it as recorded.
  if (response.setHeader) response.setHeader(name, value);
  else response.header(name, value);
}
