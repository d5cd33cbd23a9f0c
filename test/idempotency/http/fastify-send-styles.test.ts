// Fastify capture style with every way a Fastify route may send: the plugin must not make Fastify send twice.
import Fastify, { type FastifyReply, type FastifyRequest } from "fastify";
import { afterEach, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { idempotencyPlugin } from "@/blocks/idempotency/adapters/fastify";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";

const apps: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

type Route = (reply: FastifyReply, id: string) => unknown;

const STYLES: Array<[string, Route]> = [
  ["a sync route that calls reply.send() and returns nothing", (reply, id) => void reply.code(201).send({ id })],
  [
    "an async route that calls reply.send() before any await and returns nothing",
    async (reply, id) => {
      reply.code(201).send({ id });
    },
  ],
  [
    "an async route that calls reply.send() and returns nothing",
    async (reply, id) => {
      await Promise.resolve();
      reply.code(201).send({ id });
    },
  ],
  ["an async route that returns reply", async (reply, id) => reply.code(201).send({ id })],
  ["an async route that returns its value", async (reply, id) => (reply.code(201), { id })],
  [
    "a sync route that sends later, from a callback",
    (reply, id) => void setImmediate(() => reply.code(201).send({ id })),
  ],
];

/**
 * With an async onSend hook of the app after ours, the response is not written yet when ours lets
 * it go: a route that waits for what it sent must still not be sent twice.
 */
const APP_HOOKS = ["no onSend hook of the app", "an async onSend hook after ours"];

const CASES = STYLES.flatMap(([name, route]) => APP_HOOKS.map((hook) => [name, hook, route] as const));

it.each(CASES)("%s, %s: sent once, recorded, and replayed", async (_name, hook, route) => {
  const errors: unknown[] = [];
  const app = Fastify({ logger: { level: "warn", stream: { write: (line: string) => errors.push(line) } } });
  apps.push(app);
  const appOnSend = async (_request: FastifyRequest, _reply: FastifyReply, payload: unknown) => {
    await new Promise((resolve) => setImmediate(resolve));
    return payload;
  };
  await app.register(idempotencyPlugin, { handler: new IdempotencyHandler(new MemoryStore()), getUserId: () => "u1" });
  if (hook === APP_HOOKS[1]) app.addHook("onSend", appOnSend);
  let calls = 0;
  app.post(
    "/orders",
    { config: { idempotency: { requireKey: true } } },
    (_request: FastifyRequest, reply: FastifyReply) => {
      calls++;
      return route(reply, `ord_${calls}`);
    },
  );
  const send = () =>
    app.inject({ method: "POST", url: "/orders", headers: { "idempotency-key": "k1" }, payload: { amount: 1 } });
  const first = await send();
  expect(first.statusCode).toBe(201);
  expect(first.json()).toEqual({ id: "ord_1" });
  const replay = await send();
  expect(replay.statusCode).toBe(201);
  expect(replay.json()).toEqual({ id: "ord_1" });
  expect(replay.headers["idempotent-replayed"]).toBe("true");
  expect(calls).toBe(1);
  expect(errors).toEqual([]);
});
