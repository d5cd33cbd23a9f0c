// A worker process serving POST /payments on Express with RedisStore on a Redis Cluster; each execution's
// side effect is an INCR on the standalone Redis (REDIS_URL), outside the cluster, like an external provider.
import express, { type ErrorRequestHandler } from "express";
import { Cluster, Redis } from "ioredis";
import { idempotent } from "../../../registry/idempotency/adapters/express";
import { IdempotencyHandler } from "../../../registry/idempotency/handler";
import { RedisStore } from "../../../registry/idempotency/stores/redis-store";
import { WORKER_CONFIG_ENV, type WorkerConfig } from "./worker-config";

// storeUrl: the cluster's seed nodes, comma-separated; table: the store's key prefix; effectsTable: the effects' key prefix.
const config = JSON.parse(process.env[WORKER_CONFIG_ENV] ?? "{}") as WorkerConfig;
const seeds = config.storeUrl
  .split(",")
  .map((url) => ({ host: new URL(url).hostname, port: Number(new URL(url).port) }));
const cluster = new Cluster(seeds, {
  redisOptions: { maxRetriesPerRequest: 1, connectTimeout: 500 },
  clusterRetryStrategy: () => 200,
});
const effects = new Redis(config.effectsUrl, { maxRetriesPerRequest: 1 });
const handler = new IdempotencyHandler(
  new RedisStore(cluster, { keyPrefix: config.table }),
  undefined,
  config.handler ?? {},
);

const app = express();
app.post(
  "/payments",
  express.json(),
  idempotent(handler, {
    getUserId: () => "u_1",
    requireKey: true,
    isPermanentError: () => false,
    run: async (req) => {
      const key = req.get("idempotency-key") ?? "";
      const execution = await effects.incr(`${config.effectsTable}:${key}`);
      await new Promise((resolve) => setTimeout(resolve, Number((req.body as { holdMs?: number }).holdMs ?? 0)));
      return { status: 201, body: { id: `pay_${key}`, execution } };
    },
  }),
);
const sendError: ErrorRequestHandler = function sendError(err, _req, res, _next) {
  res.status(500).json({ error: { code: "INTERNAL", message: String((err as Error)?.message ?? err) } });
};
app.use(sendError);

const server = app.listen(0, "127.0.0.1", () => {
  const address = server.address();
  console.log(
    JSON.stringify({ ready: true, workerId: config.workerId, port: typeof address === "object" ? address?.port : 0 }),
  );
});
process.on("SIGTERM", () => {
  server.close();
  cluster.disconnect();
  effects.disconnect();
  process.exit(0);
});
