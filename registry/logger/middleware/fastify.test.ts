import { setTimeout as sleep } from "node:timers/promises";
import Fastify from "fastify";
import { afterAll, describe, expect, it } from "vitest";
import { captureLogs } from "../testing/capture-logs";
import { requestIdPlugin } from "./fastify";

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

const post = (n: number, headers: Record<string, string> = {}) => app.inject({ method: "POST", url: "/orders", headers, payload: { n } });

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
