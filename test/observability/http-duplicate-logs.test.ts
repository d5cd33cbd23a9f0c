// Logger block + idempotency adapters on real Express, Fastify and Hono apps: a duplicate's log lines name its request.
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import type { Logger } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import * as expressAdapter from "@/blocks/idempotency/adapters/express";
import * as fastifyAdapter from "@/blocks/idempotency/adapters/fastify";
import * as honoAdapter from "@/blocks/idempotency/adapters/hono";
import { requestId as expressRequestId } from "@/blocks/logger/adapters/express";
import { requestIdPlugin } from "@/blocks/logger/adapters/fastify";
import { requestId as honoRequestId } from "@/blocks/logger/adapters/hono";
import { captureLogs, type LogLine } from "@/blocks/logger/testing/capture-logs";

type Reply = { status: number; body: string; requestId: string | null };
type App = { post(path: string, headers: Record<string, string>): Promise<Reply>; close(): Promise<void> };
type Driver = { name: string; start(handler: IdempotencyHandler, logger: Logger): Promise<App> };

const getUserId = () => "u_1";
const charge = { status: 201, body: { id: "ch_1", amount: 100 } };
const body = JSON.stringify({ amount: 100 });

/** Each app: the logger block's request id first, a wrapper route, a capture route, and a response hook logging the decision. */
const drivers: Driver[] = [
  {
    name: "Express",
    async start(handler, logger) {
      const app = express();
      app.use(expressRequestId(), express.json());
      app.use(function logDecision(_req, res, next) {
        res.on("finish", () => logger.info({ idempotency: res.locals.idempotency }, "request finished"));
        next();
      });
      app.post("/payments/wrapped", expressAdapter.idempotent(handler, { getUserId, run: async () => charge }));
      app.post(
        "/payments/captured",
        expressAdapter.idempotency(handler, { getUserId }),
        (_req, res) => void res.status(201).json(charge.body),
      );
      const server = app.listen(0, "127.0.0.1");
      await once(server, "listening");
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      return {
        async post(path, headers) {
          const res = await fetch(base + path, {
            method: "POST",
            headers: { "content-type": "application/json", ...headers },
            body,
          });
          return { status: res.status, body: await res.text(), requestId: res.headers.get("x-request-id") };
        },
        async close() {
          server.closeAllConnections();
          server.close();
          await once(server, "close");
        },
      };
    },
  },
  {
    name: "Fastify",
    async start(handler, logger) {
      const app = Fastify();
      await app.register(requestIdPlugin);
      await app.register(fastifyAdapter.idempotencyPlugin, { handler, getUserId });
      app.addHook("onResponse", async (request) =>
        logger.info({ idempotency: request.idempotency }, "request finished"),
      );
      app.post("/payments/wrapped", fastifyAdapter.idempotent(handler, { getUserId, run: async () => charge }));
      app.post("/payments/captured", { config: { idempotency: true } }, async (_request, reply) =>
        reply.code(201).send(charge.body),
      );
      await app.ready();
      return {
        async post(path, headers) {
          const res = await app.inject({
            method: "POST",
            url: path,
            headers: { "content-type": "application/json", ...headers },
            payload: body,
          });
          return { status: res.statusCode, body: res.body, requestId: String(res.headers["x-request-id"]) };
        },
        close: () => app.close(),
      };
    },
  },
  {
    name: "Hono",
    async start(handler, logger) {
      const app = new Hono();
      app.use(honoRequestId());
      app.use(async function logDecision(c, next) {
        await next();
        logger.info({ idempotency: c.get("idempotency") }, "request finished");
      });
      app.post("/payments/wrapped", honoAdapter.idempotent(handler, { getUserId, run: async () => charge }));
      app.post("/payments/captured", honoAdapter.idempotency(handler, { getUserId }), (c) => c.json(charge.body, 201));
      return {
        async post(path, headers) {
          const res = await app.request(path, {
            method: "POST",
            headers: { "content-type": "application/json", ...headers },
            body,
          });
          return { status: res.status, body: await res.text(), requestId: res.headers.get("x-request-id") };
        },
        close: async () => {},
      };
    },
  },
];

describe.each(drivers)("$name with the logger block", (driver) => {
  const apps: App[] = [];
  afterEach(async () => void (await Promise.all(apps.splice(0).map((app) => app.close()))));

  async function start() {
    const { logger, lines } = captureLogs();
    const handler = new IdempotencyHandler(new MemoryStore(), undefined, { logger });
    const app = await driver.start(handler, logger);
    apps.push(app);
    /** The lines written while serving the request with this id. */
    const linesOf = (requestId: string) => lines.filter((line: LogLine) => line.requestId === requestId);
    return { app, lines, linesOf };
  }

  it.each(["wrapped", "captured"])(
    "logs a duplicate to the %s route with requestId, key, userId, operation and status",
    async (route) => {
      const { app, linesOf } = await start();
      const path = `/payments/${route}`;
      const first = await app.post(path, { "idempotency-key": "k-1", "x-request-id": "req-first" });
      const duplicate = await app.post(path, { "idempotency-key": "k-1", "x-request-id": "req-dup" });

      expect(first).toMatchObject({ status: 201, requestId: "req-first" });
      expect(duplicate).toEqual({ ...first, requestId: "req-dup" });
      const decision = { key: "k-1", userId: "u_1", operation: `POST ${path}` };
      expect(linesOf("req-first")).toContainEqual(
        expect.objectContaining({
          ...decision,
          requestId: "req-first",
          status: "SUCCESS",
          msg: "idempotency: executed and stored the response",
        }),
      );
      expect(linesOf("req-dup")).toContainEqual(
        expect.objectContaining({
          ...decision,
          requestId: "req-dup",
          status: "SUCCESS",
          msg: "idempotency: replayed a stored response",
        }),
      );
    },
  );

  it("keeps concurrent requests' decisions apart: each carries its own requestId and key", async () => {
    const { app, lines } = await start();
    const keys = Array.from({ length: 10 }, (_, n) => `k-${n}`);
    await Promise.all(
      keys.map((key) => app.post("/payments/wrapped", { "idempotency-key": key, "x-request-id": `first-${key}` })),
    );
    await Promise.all(
      keys.map((key) => app.post("/payments/wrapped", { "idempotency-key": key, "x-request-id": `dup-${key}` })),
    );

    const decisions = lines.filter((line) => String(line.msg).startsWith("idempotency:") && line.level !== "debug");
    expect(decisions).toHaveLength(20);
    for (const line of decisions) {
      const prefix = line.msg === "idempotency: replayed a stored response" ? "dup" : "first";
      expect(line.requestId).toBe(`${prefix}-${String(line.key)}`);
    }
  });

  it("lets a response hook log the request's idempotency context under its requestId", async () => {
    const { app, linesOf } = await start();
    await app.post("/payments/wrapped", { "idempotency-key": "k-1", "x-request-id": "req-first" });
    await app.post("/payments/wrapped", { "idempotency-key": "k-1", "x-request-id": "req-dup" });

    await expect
      .poll(() => linesOf("req-dup").filter((line) => line.msg === "request finished"))
      .toEqual([
        expect.objectContaining({
          idempotency: expect.objectContaining({
            key: "k-1",
            userId: "u_1",
            operation: "POST /payments/wrapped",
            outcome: "replayed",
          }),
        }),
      ]);
  });
});
