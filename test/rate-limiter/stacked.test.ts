// Two limiters on one route (a burst policy and a daily one): each adds its item to the RateLimit-Policy and RateLimit
// lists (draft-ietf-httpapi-ratelimit-headers-11: one item per policy), on every adapter that can stack them.
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import Koa from "koa";
import { describe, expect, it } from "vitest";
import { rateLimit as expressRateLimit } from "@/blocks/rate-limiter/adapters/express";
import { rateLimit as fastifyRateLimit } from "@/blocks/rate-limiter/adapters/fastify";
import { withRateLimit } from "@/blocks/rate-limiter/adapters/fetch";
import { rateLimit as honoRateLimit } from "@/blocks/rate-limiter/adapters/hono";
import { rateLimit as koaRateLimit } from "@/blocks/rate-limiter/adapters/koa";
import { fieldValue } from "@/blocks/rate-limiter/http/headers";
import { RateLimiter } from "@/blocks/rate-limiter/limiter";
import { MemoryRateLimitStore } from "@/blocks/rate-limiter/stores/memory-store";

type Reply = { status: number; policy: string | null; rateLimit: string | null; retryAfter: string | null };
type Send = () => Promise<Reply>;

/** burst: 3 a minute; daily: 2 a day, so the third request is refused by the daily limiter. */
function limiters(): [RateLimiter, RateLimiter] {
  const store = new MemoryRateLimitStore();
  return [
    new RateLimiter(store, { name: "burst", limit: 3, windowMs: 60_000 }),
    new RateLimiter(store, { name: "daily", limit: 2, windowMs: 86_400_000 }),
  ];
}

const fromResponse = (res: Response): Reply => ({
  status: res.status,
  policy: res.headers.get("ratelimit-policy"),
  rateLimit: res.headers.get("ratelimit"),
  retryAfter: res.headers.get("retry-after"),
});

async function listening(server: Server): Promise<{ send: Send; close: () => Promise<void> }> {
  if (!server.listening) await new Promise((resolve) => server.once("listening", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/payments`;
  return {
    send: async () => fromResponse(await fetch(url, { method: "POST" })),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const apps: Array<[string, () => Promise<{ send: Send; close: () => Promise<void> }>]> = [
  [
    "Express",
    async () => {
      const [burst, daily] = limiters();
      const app = express();
      const options = { getUserId: () => "u_1" };
      app.post("/payments", expressRateLimit(burst, options), expressRateLimit(daily, options), (_req, res) => {
        res.status(201).json({ ok: true });
      });
      return listening(app.listen(0, "127.0.0.1"));
    },
  ],
  [
    "Fastify",
    async () => {
      const [burst, daily] = limiters();
      const app = Fastify();
      const options = { getUserId: () => "u_1" };
      app.post(
        "/payments",
        { onRequest: [fastifyRateLimit(burst, options), fastifyRateLimit(daily, options)] },
        async (_request, reply) => reply.code(201).send({ ok: true }),
      );
      return {
        send: async () => {
          const res = await app.inject({ method: "POST", url: "/payments" });
          const header = (name: string) => (res.headers[name] === undefined ? null : String(res.headers[name]));
          return {
            status: res.statusCode,
            policy: header("ratelimit-policy"),
            rateLimit: header("ratelimit"),
            retryAfter: header("retry-after"),
          };
        },
        close: () => app.close(),
      };
    },
  ],
  [
    "Koa",
    async () => {
      const [burst, daily] = limiters();
      const app = new Koa();
      const options = { getUserId: () => "u_1", getRoute: () => "POST /payments" };
      app.use(koaRateLimit(burst, options));
      app.use(koaRateLimit(daily, options));
      app.use((ctx) => {
        ctx.status = 201;
        ctx.body = { ok: true };
      });
      return listening(app.listen(0, "127.0.0.1"));
    },
  ],
  [
    "Hono",
    async () => {
      const [burst, daily] = limiters();
      const app = new Hono();
      const options = { getUserId: () => "u_1" };
      app.post("/payments", honoRateLimit(burst, options), honoRateLimit(daily, options), (c) =>
        c.json({ ok: true }, 201),
      );
      return {
        send: async () => fromResponse(await app.request("/payments", { method: "POST" })),
        close: async () => {},
      };
    },
  ],
  [
    "fetch",
    async () => {
      const [burst, daily] = limiters();
      const options = { getUserId: () => "u_1", getRoute: () => "POST /payments" };
      const handler = withRateLimit(
        burst,
        options,
        withRateLimit(daily, options, () => Response.json({ ok: true }, { status: 201 })),
      );
      return {
        send: async () => fromResponse(await handler(new Request("http://localhost/payments", { method: "POST" }))),
        close: async () => {},
      };
    },
  ],
];

/** The items of a list field, in any order (a middleware that adds its headers after the route adds them last). */
const items = (value: string | null) => value?.split(", ").sort();

describe.each(apps)("%s: two limiters on one route", (_name, start) => {
  it("each adds its item to RateLimit-Policy and RateLimit; the refusal carries both and its own Retry-After", async () => {
    const app = await start();
    try {
      const first = await app.send();
      expect(first.status).toBe(201);
      expect(items(first.policy)).toEqual(['"burst";q=3;w=60', '"daily";q=2;w=86400']);
      expect(items(first.rateLimit)).toEqual(['"burst";r=2;t=20', '"daily";r=1;t=43200']);
      await app.send();
      const refused = await app.send();
      expect(refused.status).toBe(429);
      expect(items(refused.policy)).toEqual(['"burst";q=3;w=60', '"daily";q=2;w=86400']);
      expect(items(refused.rateLimit)).toEqual(['"burst";r=0;t=20', '"daily";r=0;t=43200']);
      expect(refused.retryAfter).toBe("43200");
    } finally {
      await app.close();
    }
  });
});

it("fieldValue: a list field gets the new item after those already there; Retry-After is replaced", () => {
  expect(fieldValue("ratelimit", '"b";r=1;t=1', undefined)).toBe('"b";r=1;t=1');
  expect(fieldValue("ratelimit", '"b";r=1;t=1', "")).toBe('"b";r=1;t=1');
  expect(fieldValue("ratelimit", '"b";r=1;t=1', '"a";r=2;t=3')).toBe('"a";r=2;t=3, "b";r=1;t=1');
  expect(fieldValue("ratelimit", '"c";r=1;t=1', ['"a";r=2;t=3', '"b";r=0;t=9'])).toBe(
    '"a";r=2;t=3, "b";r=0;t=9, "c";r=1;t=1',
  );
  expect(fieldValue("retry-after", "5", "30")).toBe("5");
});
