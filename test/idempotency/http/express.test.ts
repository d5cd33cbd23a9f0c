// The HTTP conformance suite on Express 5, through a real listener on port 0, plus Express-only cases.
import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response } from "express";
import { afterEach, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import type { IdempotencyContext } from "@/blocks/idempotency/http/context";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import {
  defaultHttpStores,
  isPermanentRouteError,
  overHttp,
  routeResult,
  runHttpConformance,
  type HttpDriver,
  type RouteReply,
  type TestApp,
} from "../support/http-conformance";
import type { RouteContext } from "@/blocks/idempotency/http/route-options";
import { idempotency, idempotent } from "@/blocks/idempotency/adapters/express";
import { scaleOutStoreKinds } from "../support/store-harness";

type WithUser = Request & { user?: { id: string } };

const expressDriver: HttpDriver = {
  captureSeesThrownErrors: false,
  async start({ handler, style, routes }) {
    const app = express();
    const contexts = new Map<string, () => IdempotencyContext | undefined>();
    app.use(function recordContext(req, res, next) {
      contexts.set(req.get("x-test-id") ?? "", () => res.locals.idempotency);
      next();
    });
    app.use(express.json(), function authenticate(req: WithUser, _res, next) {
      const id = req.get("x-user-id");
      if (id) req.user = { id };
      next();
    });
    for (const route of routes) {
      const options = {
        ...route.options,
        isPermanentError: isPermanentRouteError,
        ...(!route.defaultUserId && { getUserId: (req: WithUser) => req.user!.id }),
      };
      const method = (route.method ?? "POST").toLowerCase() as "post" | "put" | "patch" | "delete";
      if (style === "wrapper") {
        app[method](
          route.path,
          idempotent(handler, {
            ...options,
            run: async (...args: unknown[]) => routeResult(await route.logic(args.at(-1) as RouteContext)),
          }),
        );
      } else {
        app[method](route.path, idempotency(handler, options), async (_req, res) => send(res, await route.logic()));
      }
    }
    app.use(frameworkErrorHandler);
    return listen(app, contexts);
  },
};

function send(res: Response, reply: RouteReply): void {
  res.status(reply.status ?? 200).set(reply.headers ?? {});
  if (reply.stream) Readable.from(reply.stream).pipe(res);
  else if (typeof reply.body === "string") res.type("text/plain").send(reply.body);
  else res.json(reply.body);
}

const frameworkErrorHandler: ErrorRequestHandler = function frameworkErrorHandler(err, _req, res, _next) {
  res.status(err.status ?? err.statusCode ?? 500).json({ frameworkError: err.message });
};

function listen(app: express.Express, contexts: Map<string, () => IdempotencyContext | undefined>): Promise<TestApp> {
  return overHttp(app.listen(0, "127.0.0.1"), contexts);
}

// Express also runs the checklist over the scale-out stores (Redis standalone and Cluster, DynamoDB).
runHttpConformance(expressDriver, [...defaultHttpStores, ...scaleOutStoreKinds]);

describe("Express capture", () => {
  const apps: TestApp[] = [];
  afterEach(async () => void (await Promise.all(apps.splice(0).map((app) => app.close()))));

  async function start(route: (req: Request, res: Response) => void) {
    const handler = new IdempotencyHandler(new MemoryStore());
    const app = express();
    const contexts = new Map<string, () => IdempotencyContext | undefined>();
    app.use((req, res, next) => (contexts.set(req.get("x-test-id") ?? "", () => res.locals.idempotency), next()));
    app.post("/payments", idempotency(handler, { getUserId: () => "u_1" }), route);
    const testApp = await listen(app, contexts);
    apps.push(testApp);
    return testApp;
  }

  it("records chunked write()s and replays them as one body", async () => {
    let runs = 0;
    const app = await start((_req, res) => {
      runs++;
      res.status(201).type("text/csv");
      res.write("id,amount\n");
      res.write(Buffer.from("pay_1,100\n"));
      res.end("pay_2,250\n");
    });
    const key = randomUUID();
    const first = await app.request({ key });
    const replay = await app.request({ key });
    expect(first.body.toString()).toBe("id,amount\npay_1,100\npay_2,250\n");
    expect(replay.status).toBe(201);
    expect(replay.body.equals(first.body)).toBe(true);
    expect(replay.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(runs).toBe(1);
  });

  /** A middleware that wraps `write` and `end` on each response, as compression does: here it upper-cases the body. */
  function shout(_req: Request, res: Response, next: () => void): void {
    const write = res.write;
    const end = res.end;
    // Same length, so the Content-Length Express set still holds.
    const loud = (chunk: unknown) =>
      typeof chunk === "string" || Buffer.isBuffer(chunk) ? Buffer.from(chunk.toString().toUpperCase()) : chunk;
    res.write = function (this: Response, chunk: unknown, ...rest: unknown[]) {
      return Reflect.apply(write, this, [loud(chunk), ...rest]) as boolean;
    } as Response["write"];
    res.end = function (this: Response, chunk?: unknown, ...rest: unknown[]) {
      return Reflect.apply(end, this, [loud(chunk), ...rest]) as Response;
    } as Response["end"];
    next();
  }

  async function startWith(mount: (app: express.Express, protect: RequestHandler, route: RequestHandler) => void) {
    const handler = new IdempotencyHandler(new MemoryStore());
    const app = express();
    let runs = 0;
    const route: RequestHandler = (_req, res) => {
      runs++;
      res.status(201).type("text/plain").send(`charged ${runs}`);
    };
    mount(app, idempotency(handler, { getUserId: () => "u_1" }), route);
    const testApp = await listen(app, new Map());
    apps.push(testApp);
    return { app: testApp, runs: () => runs };
  }

  it("records what a middleware that wraps write() and end() before it makes of the body, and puts its wrappers back", async () => {
    const leftOn: boolean[] = [];
    const { app, runs } = await startWith((app, protect, route) => {
      app.post(
        "/payments",
        shout,
        (_req, res, next) => {
          const { write, end } = res;
          res.on("finish", () => leftOn.push(res.write === write && res.end === end));
          next();
        },
        protect,
        route,
      );
    });
    const key = randomUUID();
    const first = await app.request({ key });
    const replay = await app.request({ key });
    expect(first.body.toString()).toBe("CHARGED 1");
    expect(replay.body.toString()).toBe("CHARGED 1");
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(runs()).toBe(1);
    expect(leftOn).toEqual([true, true]);
  });

  it("records through a middleware that wraps write() and end() after it, between it and the route", async () => {
    const { app, runs } = await startWith((app, protect, route) => app.post("/payments", protect, shout, route));
    const key = randomUUID();
    const first = await app.request({ key });
    const replay = await app.request({ key });
    expect(first.body.toString()).toBe("CHARGED 1");
    expect(replay.body.toString()).toBe("CHARGED 1");
    expect(runs()).toBe(1);
  });

  it("records on a mounted sub-app, leaves no write() or end() of its own on the response, and leaves other routes' responses alone", async () => {
    const ownHooks: boolean[] = [];
    const { app, runs } = await startWith((app, protect, route) => {
      app.use((_req, res, next) => {
        res.on("finish", () => ownHooks.push(Object.hasOwn(res, "write") || Object.hasOwn(res, "end")));
        next();
      });
      const payments = express();
      payments.post("/payments", protect, route);
      payments.post("/quotes", (_req, res) => {
        res.write("quote ");
        res.end("42");
      });
      app.use("/v1", payments);
    });
    const key = randomUUID();
    const first = await app.request({ key, path: "/v1/payments" });
    const replay = await app.request({ key, path: "/v1/payments" });
    const quote = await app.request({ path: "/v1/quotes" });
    expect(first.status).toBe(201);
    expect(replay.body.toString()).toBe("charged 1");
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(quote.body.toString()).toBe("quote 42");
    expect(runs()).toBe(1);
    expect(ownHooks).toEqual([false, false, false]);
  });

  it("lets sendFile through unrecorded and frees the key", async () => {
    const file = join(tmpdir(), `receipt-${randomUUID()}.txt`);
    await writeFile(file, "receipt #1");
    let runs = 0;
    const app = await start((_req, res) => {
      runs++;
      res.sendFile(file);
    });
    const key = randomUUID();
    const first = await app.request({ key });
    const second = await app.request({ key });
    expect(first.body.toString()).toBe("receipt #1");
    expect(first.context?.outcome).toBe("uncaptured");
    expect(second.body.toString()).toBe("receipt #1");
    expect(runs).toBe(2);
  });
});

// Issue 12, point 2: under a router mounted at "/accounts/:id", `req.baseUrl` is the concrete
// "/accounts/A": every URL became its own operation (unbounded metric labels, 503 on a huge segment).
describe("Express operation names never hold a concrete path segment", () => {
  const apps: TestApp[] = [];
  afterEach(async () => void (await Promise.all(apps.splice(0).map((app) => app.close()))));

  async function start(mount: (app: express.Express, protect: RequestHandler) => void) {
    const handler = new IdempotencyHandler(new MemoryStore());
    const app = express();
    const contexts = new Map<string, () => IdempotencyContext | undefined>();
    app.use((req, res, next) => (contexts.set(req.get("x-test-id") ?? "", () => res.locals.idempotency), next()));
    mount(app, idempotency(handler, { getUserId: () => "u_1" }));
    app.use(frameworkErrorHandler);
    const testApp = await listen(app, contexts);
    apps.push(testApp);
    return testApp;
  }

  it("names a route under a router mounted with a parameter by its own template, the mount left out", async () => {
    const app = await start((app, protect) => {
      const router = express.Router();
      router.post("/withdrawals", protect, (_req, res) => void res.status(201).json({ ok: true }));
      app.use("/accounts/:id", router);
    });
    const operations = new Set<unknown>();
    for (const account of ["A", "B", "x".repeat(6_000)]) {
      const response = await app.request({ key: randomUUID(), path: `/accounts/${account}/withdrawals` });
      expect(response.status).toBe(201);
      operations.add(response.context?.operation);
    }
    expect([...operations]).toEqual(["POST <router>/withdrawals"]);
  });

  it("refuses, as a setup error with the fix, to guess an operation where no route is matched yet (app.use)", async () => {
    const app = await start((app, protect) => {
      app.use(protect);
      app.post("/payments", (_req, res) => void res.status(201).json({ ok: true }));
    });
    const response = await app.request({ key: randomUUID() });
    expect(response.status).toBe(500);
    expect(response.json()).toEqual({ frameworkError: expect.stringContaining("getOperation") });
  });
});
