// A duplicate waiting for the first request (waitMs) stops polling when its client disconnects, on the Node adapters.
import { once } from "node:events";
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import Fastify from "fastify";
import Koa from "koa";
import { afterEach, describe, expect, it } from "vitest";
import { idempotent as expressIdempotent } from "@/blocks/idempotency/adapters/express";
import { idempotent as fastifyIdempotent } from "@/blocks/idempotency/adapters/fastify";
import { idempotent as koaIdempotent } from "@/blocks/idempotency/adapters/koa";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import { deferred } from "@/blocks/idempotency/testing/deferred";
import { recordingLogger } from "@/blocks/idempotency/testing/recorders";

const WAITED = "idempotency: a duplicate waited for the first attempt";

/** A handler whose log tells the test when a wait ended, and how. */
function waitingHandler() {
  const logger = recordingLogger();
  const ended = deferred<unknown>();
  const info = logger.info!.bind(logger);
  logger.info = (fields: Record<string, unknown>, msg: string) => {
    info(fields, msg);
    if (msg === WAITED) ended.resolve(fields.outcome);
  };
  return {
    handler: new IdempotencyHandler(new MemoryStore(), undefined, { waitMs: 60_000, logger }),
    waitEnded: ended.promise,
  };
}

type Run = () => Promise<{ status: number; body: unknown }>;
type Started = { url: string; close(): Promise<void> };

async function listen(listener: RequestListener): Promise<Started> {
  const server: Server = createServer(listener).listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/payments`,
    async close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

const apps: Record<string, (handler: IdempotencyHandler, run: Run) => Promise<Started>> = {
  express: (handler, run) =>
    listen(express().post("/payments", expressIdempotent(handler, { getUserId: () => "u_1", run }))),
  koa: (handler, run) =>
    listen(
      new Koa()
        .use(koaIdempotent(handler, { getUserId: () => "u_1", getOperation: () => "POST /payments", run }))
        .callback(),
    ),
  fastify: async (handler, run) => {
    const app = Fastify({ forceCloseConnections: true });
    app.post("/payments", fastifyIdempotent(handler, { getUserId: () => "u_1", run }));
    const address = await app.listen({ port: 0, host: "127.0.0.1" });
    return { url: `${address}/payments`, close: () => app.close() };
  },
};

describe.each(Object.keys(apps))("%s: a waiting duplicate whose client disconnects", (name) => {
  let app: Started | undefined;
  afterEach(async () => app?.close());

  it("stops waiting at once (outcome aborted), long before waitMs; the first request still completes", async () => {
    const { handler, waitEnded } = waitingHandler();
    const entered = deferred();
    const finish = deferred();
    let runs = 0;
    const run = async () => {
      runs++;
      entered.resolve();
      await finish.promise;
      return { status: 201, body: { id: "pay_1" } };
    };
    app = await apps[name]!(handler, run);
    const url = app.url;
    const send = (signal?: AbortSignal) =>
      fetch(url, {
        method: "POST",
        headers: { "idempotency-key": "k_1", "content-type": "application/json" },
        body: "{}",
        signal: signal ?? null,
      });
    const first = send();
    await entered.promise;
    const client = new AbortController();
    const started = performance.now();
    const duplicate = send(client.signal).catch((err: unknown) => err);
    setTimeout(() => client.abort(), 50);
    expect(await waitEnded).toBe("aborted");
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(await duplicate).toBeInstanceOf(Error);
    finish.resolve();
    expect((await first).status).toBe(201);
    expect(runs).toBe(1);
  });
});
