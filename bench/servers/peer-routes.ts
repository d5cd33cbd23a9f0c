// Peer libraries mounted on Express the way their READMEs show, doing the same payment work as ours.
import { createRequire } from "node:module";
import express, { type RequestHandler } from "express";
import { getSharedIdempotencyService, idempotency } from "express-idempotency";
import type RedisAdapterClass from "express-idempotency-redis-adapter";
import { Idempotency, IdempotencyError } from "@node-idempotency/core";
import { MemoryStorageAdapter } from "@node-idempotency/storage-adapter-memory";
import { RedisStorageAdapter } from "@node-idempotency/storage-adapter-redis";
import { charge } from "./payment";
import type { ServerSpec } from "./spec";

// A CommonJS module whose class is `exports.default`: Node's ESM import would hand us the exports object.
const RedisAdapter: typeof RedisAdapterClass = createRequire(import.meta.url)(
  "express-idempotency-redis-adapter",
).default;

export type PeerRoute = { handlers: RequestHandler[]; close(): Promise<void> };

/** express-idempotency: a middleware before the route, which checks `isHit` to skip a replayed request. */
export async function expressIdempotencyRoute(spec: ServerSpec): Promise<PeerRoute> {
  const adapter = spec.backend === "redis" ? new RedisAdapter({ connectionConfig: { url: spec.redisUrl } }) : undefined;
  await adapter?.connect();
  // The two peer packages' types disagree under exactOptionalPropertyTypes; they work together at run time.
  const middleware = idempotency(adapter ? { dataAdapter: adapter as never } : undefined);
  const service = getSharedIdempotencyService();
  const route: RequestHandler = function payment(req, res) {
    if (service.isHit(req)) return;
    res.status(201).json(charge(req.body));
  };
  return { handlers: [express.json(), middleware, route], close: async () => adapter?.disconnect() };
}

/** @node-idempotency/core has no Express adapter: wired as its NestJS interceptor does (await onResponse, then send). */
export async function nodeIdempotencyRoute(spec: ServerSpec): Promise<PeerRoute> {
  const storage =
    spec.backend === "redis" ? new RedisStorageAdapter({ url: spec.redisUrl }) : new MemoryStorageAdapter();
  if (storage instanceof RedisStorageAdapter) await storage.connect();
  const core = new Idempotency(storage, { cacheKeyPrefix: spec.redisPrefix ?? "idempotency" });
  const route: RequestHandler = async function payment(req, res, next) {
    const params = { headers: req.headers, body: req.body, path: req.path, method: req.method };
    try {
      const replay = await core.onRequest(params);
      if (replay) {
        res.status(Number(replay.additional?.statusCode ?? 200)).json(replay.body);
        return;
      }
      const body = charge(req.body);
      await core.onResponse(params, { body, additional: { statusCode: 201 } });
      res.status(201).json(body);
    } catch (err) {
      if (err instanceof IdempotencyError) res.status(409).json({ error: { code: err.code, message: err.message } });
      else next(err);
    }
  };
  return {
    handlers: [express.json(), route],
    close: async () => (storage instanceof RedisStorageAdapter ? storage.disconnect() : undefined),
  };
}
