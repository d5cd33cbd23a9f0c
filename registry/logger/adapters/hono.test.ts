import { setTimeout as sleep } from "node:timers/promises";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { captureLogs } from "../testing/capture-logs";
import { requestId } from "./hono";

const { logger, lines } = captureLogs();
const app = new Hono();
app.use(requestId());
app.post("/orders", async (c) => {
  const { n } = await c.req.json<{ n: number }>();
  logger.info({ n }, "after body parsing");
  await sleep(n % 3);
  logger.info({ n }, "after await");
  return c.json({ requestId: c.get("requestId") }, 201);
});

const post = async (n: number, headers: Record<string, string> = {}) =>
  app.request("/orders", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ n }),
  });

describe("hono requestId()", () => {
  it("keeps a safe incoming x-request-id, echoes it and exposes it as c.get('requestId')", async () => {
    const res = await post(1, { "x-request-id": "req_from_gateway" });
    expect(res.headers.get("x-request-id")).toBe("req_from_gateway");
    expect(await res.json()).toEqual({ requestId: "req_from_gateway" });
  });

  it("replaces an unsafe incoming id with a generated one", async () => {
    const res = await post(2, { "x-request-id": "<script>" });
    const id = res.headers.get("x-request-id");
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await res.json()).toEqual({ requestId: id });
  });

  it("stamps each concurrent request's lines with its own id, after body parsing and awaits", async () => {
    lines.length = 0;
    const responses = await Promise.all(Array.from({ length: 20 }, (_, n) => post(n, { "x-request-id": `req-${n}` })));
    expect(responses.map((res) => res.status)).toEqual(Array(20).fill(201));
    expect(lines).toHaveLength(40);
    for (const line of lines) expect(line.requestId).toBe(`req-${String(line.n)}`);
  });
});
