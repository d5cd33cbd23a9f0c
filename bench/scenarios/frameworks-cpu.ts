// Server CPU per request of the Koa, NestJS and fetch adapters (wrapper style, MemoryStore, fresh keys) against each bare route.
// `npx tsx bench/scenarios/frameworks-cpu.ts` (Linux: reads /proc). BENCH_CPU_REQUESTS sets N (default 10 000).
import "reflect-metadata";
import { spawn } from "node:child_process";
import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { serve } from "@hono/node-server";
import Router from "@koa/router";
import { Body, Controller, HttpCode, Module, Post } from "@nestjs/common";
import { APP_INTERCEPTOR, NestFactory } from "@nestjs/core";
import autocannon from "autocannon";
import Koa from "koa";
import { idempotent as fetchIdempotent } from "../../registry/idempotency/adapters/fetch";
import { idempotent as koaIdempotent } from "../../registry/idempotency/adapters/koa";
import { IDEMPOTENCY_HANDLER, Idempotent, IdempotencyInterceptor } from "../../registry/idempotency/adapters/nestjs";
import { IdempotencyHandler } from "../../registry/idempotency/handler";
import { MemoryStore } from "../../registry/idempotency/stores/memory-store";
import { processCpuSeconds } from "../support/proc-cpu";

const ROUTES = ["koa-bare", "koa-block", "nestjs-bare", "nestjs-block", "fetch-bare", "fetch-block"] as const;
type Route = (typeof ROUTES)[number];
const REQUESTS = Number(process.env.BENCH_CPU_REQUESTS ?? 10_000);
const ROUNDS = 2;
const BODY = JSON.stringify({ amount: 100, currency: "EUR" });
const charge = (body: unknown) => ({ id: "pay_1", ...(body as object) });

/** Starts one route on 127.0.0.1:0 in this process and returns its port. */
async function startRoute(route: Route): Promise<number> {
  const handler = new IdempotencyHandler(new MemoryStore({ maxRecords: 1_000_000 }));
  const getUserId = () => "u_1";
  if (route.startsWith("koa")) {
    const router = new Router();
    if (route === "koa-bare") router.post("/payments", (ctx) => void ((ctx.status = 201), (ctx.body = charge((ctx.request as { body?: unknown }).body))));
    else router.post("/payments", koaIdempotent(handler, { getUserId, run: (ctx) => ({ status: 201, body: charge((ctx.request as { body?: unknown }).body) }) }));
    const app = new Koa().use(readJson).use(router.routes());
    return listening(app.listen(0, "127.0.0.1"));
  }
  if (route.startsWith("fetch")) {
    const bare = async (request: Request) => Response.json(charge(await request.json()), { status: 201 });
    const block = fetchIdempotent(handler, { getUserId, getOperation: () => "POST /payments", run: async (request) => ({ status: 201, body: charge(await request.json()) }) });
    // Standard Response objects for both routes, as Next.js, Bun and Deno have (not @hono/node-server's lighter stand-ins).
    const fetch = route === "fetch-bare" ? bare : (request: Request) => block(request, undefined);
    return listening(serve({ fetch, port: 0, hostname: "127.0.0.1", overrideGlobalObjects: false }) as Server);
  }
  @Controller("payments")
  class BareController {
    @Post()
    @HttpCode(201)
    create(@Body() body: unknown) {
      return charge(body);
    }
  }
  @Controller("payments")
  class BlockController {
    @Post()
    @HttpCode(201)
    @Idempotent({ getUserId })
    create(@Body() body: unknown) {
      return charge(body);
    }
  }
  const providers = [{ provide: IDEMPOTENCY_HANDLER, useValue: handler }, { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor }];
  @Module(route === "nestjs-bare" ? { controllers: [BareController] } : { controllers: [BlockController], providers })
  class AppModule {}
  const app = await NestFactory.create(AppModule, { logger: false });
  await app.listen(0, "127.0.0.1");
  return (app.getHttpServer().address() as AddressInfo).port;
}

const readJson: Koa.Middleware = async (ctx, next) => {
  let text = "";
  for await (const chunk of ctx.req) text += String(chunk);
  (ctx.request as { body?: unknown }).body = JSON.parse(text);
  await next();
};

async function listening(server: Server): Promise<number> {
  if (!server.listening) await once(server, "listening");
  return (server.address() as AddressInfo).port;
}

let sent = 0;
async function fire(port: number, amount: number): Promise<void> {
  await autocannon({
    url: `http://127.0.0.1:${port}/payments`,
    method: "POST",
    connections: 10,
    amount,
    headers: { "content-type": "application/json" },
    body: BODY,
    // A fresh key per request: every request executes (the first-request path, not replays).
    requests: [{ setupRequest: (request) => ({ ...request, headers: { ...request.headers, "idempotency-key": `cpu-${process.pid}-${sent++}` } }) }],
  });
}

/** Spawns this file in server mode for one route; resolves with its pid and port. */
async function spawnRoute(route: Route) {
  const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), "serve", route], { stdio: ["ignore", "pipe", "inherit"] });
  const [line] = (await once(child.stdout, "data")) as [Buffer];
  return { route, pid: child.pid!, port: Number(/PORT (\d+)/.exec(line.toString())?.[1]), stop: () => child.kill() };
}

async function main(): Promise<void> {
  const servers = [];
  for (const route of ROUTES) servers.push(await spawnRoute(route));
  try {
    const perRequest: Record<string, number[]> = {};
    for (let round = 0; round < ROUNDS; round++) {
      for (const server of servers) {
        await fire(server.port, 2_000);
        const before = processCpuSeconds(server.pid);
        await fire(server.port, REQUESTS);
        (perRequest[server.route] ??= []).push(((processCpuSeconds(server.pid) - before) / REQUESTS) * 1e6);
      }
    }
    console.log(`server CPU per request, best of ${ROUNDS} rounds of ${REQUESTS} (noisy: the machine is shared)`);
    for (const framework of ["koa", "nestjs", "fetch"]) {
      const bare = Math.min(...(perRequest[`${framework}-bare`] ?? []));
      const block = Math.min(...(perRequest[`${framework}-block`] ?? []));
      console.log(`${framework.padEnd(8)} bare ${Math.round(bare)} us  block ${Math.round(block)} us  overhead +${Math.round(block - bare)} us (x${(block / bare).toFixed(2)})`);
    }
  } finally {
    for (const server of servers) server.stop();
  }
}

if (process.argv[2] === "serve") {
  const port = await startRoute(process.argv[3] as Route);
  console.log(`PORT ${port}`);
} else {
  await main();
}
