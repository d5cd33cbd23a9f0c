// One small app per framework with a rate-limited route, driven the same way (real listener, inject, request).
import type { AddressInfo } from "node:net";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { rateLimit as expressRateLimit } from "@/blocks/rate-limiter/adapters/express";
import { rateLimit as fastifyRateLimit } from "@/blocks/rate-limiter/adapters/fastify";
import { rateLimit as honoRateLimit } from "@/blocks/rate-limiter/adapters/hono";
import type { RateLimiter } from "@/blocks/rate-limiter/limiter";

export type Reply = { status: number; headers: Record<string, string | undefined>; body: unknown };
export type RunningApp = { send(user: string): Promise<Reply>; close(): Promise<void> };
export type Framework = { name: string; serve(limiter: RateLimiter): Promise<RunningApp> };

const HEADERS = ["ratelimit-policy", "ratelimit", "retry-after", "content-type"];

async function fromFetch(res: Response): Promise<Reply> {
  const text = await res.text();
  return { status: res.status, headers: Object.fromEntries(HEADERS.map((h) => [h, res.headers.get(h) ?? undefined])), body: text ? JSON.parse(text) : undefined };
}

export const frameworks: Framework[] = [
  {
    name: "Express",
    async serve(limiter) {
      const app = express();
      app.post("/payments/:id", (req, _res, next) => {
        (req as { user?: { id: string } }).user = { id: req.get("x-user") as string };
        next();
      }, expressRateLimit(limiter), (_req, res) => void res.status(201).json({ ok: true }));
      const server = app.listen(0);
      await new Promise((resolve) => server.once("listening", resolve));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      return {
        send: async (user) => fromFetch(await fetch(`${base}/payments/p_1`, { method: "POST", headers: { "x-user": user } })),
        close: () => new Promise((resolve) => server.close(() => resolve())),
      };
    },
  },
  {
    name: "Fastify",
    async serve(limiter) {
      const app = Fastify();
      app.addHook("onRequest", async (request) => {
        (request as { user?: { id: string } }).user = { id: String(request.headers["x-user"]) };
      });
      app.addHook("onRequest", fastifyRateLimit(limiter));
      app.post("/payments/:id", async (_request, reply) => reply.code(201).send({ ok: true }));
      await app.ready();
      return {
        async send(user) {
          const res = await app.inject({ method: "POST", url: "/payments/p_1", headers: { "x-user": user } });
          const headers = Object.fromEntries(HEADERS.map((h) => [h, res.headers[h] === undefined ? undefined : String(res.headers[h])]));
          return { status: res.statusCode, headers, body: res.body ? res.json() : undefined };
        },
        close: () => app.close(),
      };
    },
  },
  {
    name: "Hono",
    async serve(limiter) {
      const app = new Hono();
      app.use("/payments/*", honoRateLimit(limiter, { getUserId: (c) => c.req.header("x-user") }));
      app.post("/payments/:id", (c) => c.json({ ok: true }, 201));
      return {
        send: async (user) => fromFetch(await app.request("/payments/p_1", { method: "POST", headers: { "x-user": user } })),
        close: async () => {},
      };
    },
  },
];
