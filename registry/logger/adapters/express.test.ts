import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import express, { type Request, type Response } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { captureLogs } from "../testing/capture-logs";
import { requestId } from "./express";

/** The `{ n }` each test request sends, as express.json() parses it. */
type OrderRequest = Request<object, unknown, { n: number }>;
/** What requestId() puts in res.locals. */
type OrderResponse = Response<unknown, { requestId: string }>;

const { logger, lines } = captureLogs();
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  const app = express();
  app.use(requestId());
  app.use(express.json());
  app.post("/orders", async (req: OrderRequest, res: OrderResponse) => {
    logger.info({ n: req.body.n }, "after body parsing");
    await sleep(req.body.n % 3);
    logger.info({ n: req.body.n }, "after await");
    res.status(201).json({ requestId: res.locals.requestId });
  });
  server = app.listen(0);
  await new Promise((resolve) => server.once("listening", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

const post = (n: number, headers: Record<string, string> = {}) =>
  fetch(`${baseUrl}/orders`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ n }),
  });

describe("express requestId()", () => {
  it("keeps a safe incoming x-request-id and echoes it", async () => {
    const res = await post(1, { "x-request-id": "req_from_gateway" });
    expect(res.headers.get("x-request-id")).toBe("req_from_gateway");
    expect(await res.json()).toEqual({ requestId: "req_from_gateway" });
  });

  it("replaces an unsafe incoming id with a generated one", async () => {
    const res = await post(2, { "x-request-id": "x".repeat(500) });
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
