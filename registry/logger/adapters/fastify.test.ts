import { setTimeout as sleep } from "node:timers/promises";
import Fastify from "fastify";
import { afterAll, describe, expect, it } from "vitest";
import { captureLogs } from "../testing/capture-logs";
import { fastifyRequestId, requestIdPlugin } from "./fastify";

const { logger, lines } = captureLogs();
const app = Fastify();
await app.register(requestIdPlugin);
app.addHook("preHandler", (request, _reply, done) => {
  logger.info({ n: (request.body as { n: number }).n }, "in a hook");
  done();
});
app.post<{ Body: { n: number } }>("/orders", async (request, reply) => {
  logger.info({ n: request.body.n }, "after body parsing");
  await sleep(request.body.n % 3);
  logger.info({ n: request.body.n }, "after await");
  return reply.code(201).send({ ok: true });
});

afterAll(() => app.close());

const post = (n: number, headers: Record<string, string> = {}) =>
  app.inject({ method: "POST", url: "/orders", headers, payload: { n } });

describe("fastify requestIdPlugin", () => {
  it("keeps a safe incoming x-request-id and echoes it, also on routes outside the plugin's scope", async () => {
    const res = await post(1, { "x-request-id": "req_from_gateway" });
    expect(res.statusCode).toBe(201);
    expect(res.headers["x-request-id"]).toBe("req_from_gateway");
  });

  it("replaces an unsafe incoming id with a generated one", async () => {
    const res = await post(2, { "x-request-id": "bad id\n" });
    expect(res.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("stamps each concurrent request's lines with its own id, in hooks, after body parsing and awaits", async () => {
    lines.length = 0;
    const responses = await Promise.all(Array.from({ length: 20 }, (_, n) => post(n, { "x-request-id": `req-${n}` })));
    expect(responses.map((res) => res.statusCode)).toEqual(Array(20).fill(201));
    expect(lines).toHaveLength(60);
    for (const line of lines) expect(line.requestId).toBe(`req-${String(line.n)}`);
  });
});

describe("fastify requestIdPlugin with fastifyRequestId as genReqId", () => {
  const logged = captureLogs();
  const withIds = Fastify({ loggerInstance: logged.logger, genReqId: fastifyRequestId() });
  withIds.register(requestIdPlugin);
  withIds.get("/ping", (request) => {
    request.log.info("in the route");
    return Promise.resolve({ id: request.id });
  });
  afterAll(() => withIds.close());

  it("gives Fastify's own lines (before the plugin's context too) the id the response echoes", async () => {
    for (const headers of [{ "x-request-id": "req_gw_1" }, {}]) {
      logged.lines.length = 0;
      const res = await withIds.inject({ method: "GET", url: "/ping", headers });
      const id = res.headers["x-request-id"];
      expect(id).toBe("x-request-id" in headers ? "req_gw_1" : res.json<{ id: string }>().id);
      const messages = logged.lines.map((line) => [line.msg, line.reqId]);
      expect(messages).toEqual([
        ["incoming request", id],
        ["in the route", id],
        ["request completed", id],
      ]);
    }
  });

  it("still refuses an unsafe incoming id", async () => {
    const res = await withIds.inject({ method: "GET", url: "/ping", headers: { "x-request-id": "a\nfake line" } });
    expect(res.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.json<{ id: string }>().id).toBe(res.headers["x-request-id"]);
  });
});
