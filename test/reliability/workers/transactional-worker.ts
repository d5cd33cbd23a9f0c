// A worker serving POST /orders behind Express `idempotent(..., { transaction: true })`: its order row commits with the record.
import type { Server } from "node:http";
import express, { type ErrorRequestHandler } from "express";
import pg from "pg";
import { idempotent } from "../../../registry/idempotency/adapters/express";
import { IdempotencyHandler } from "../../../registry/idempotency/handler";
import type { BlockLogger as IdempotencyLogger } from "../../../registry/idempotency/logger";
import { pgClient } from "../../../registry/idempotency/stores/clients/pg";
import { PostgresStore } from "../../../registry/idempotency/stores/postgres-store";
import { readConfig } from "./worker-runtime";

const config = readConfig();
const log = (level: string) => (fields: Record<string, unknown>, msg: string) => {
  const { err, ...rest } = fields;
  const error =
    err instanceof Error ? { name: err.name, message: err.message, code: (err as { code?: unknown }).code } : err;
  process.stdout.write(`${JSON.stringify({ level, msg, workerId: config.workerId, ...rest, err: error })}\n`);
};
const logger: IdempotencyLogger = { info: () => {}, warn: log("warn"), error: log("error") };

// One pool for the store and the orders: they share each transaction, so both go through `storeUrl` (the proxy when cut).
const pool = new pg.Pool({
  connectionString: config.storeUrl,
  max: config.pool?.max ?? 10,
  connectionTimeoutMillis: config.pool?.connectionTimeoutMillis ?? 2_000,
});
pool.on("error", (err) => logger.warn?.({ status: "POOL_ERROR", err }, "pool: idle client error"));
const handler = new IdempotencyHandler(new PostgresStore(pgClient(pool), { table: config.table }), undefined, {
  ...config.handler,
  logger,
});

const app = express();
app.post(
  "/orders",
  (_req, res, next) => {
    // Tells the test what the block decided for each answer (from the adapter's request context).
    const writeHead = res.writeHead;
    res.writeHead = function withOutcome(this: typeof res, ...args: Parameters<typeof writeHead>) {
      const outcome = res.locals.idempotency?.outcome;
      if (outcome && !res.headersSent) res.setHeader("x-idempotency-outcome", outcome);
      return writeHead.apply(this, args);
    } as typeof writeHead;
    next();
  },
  express.json(),
  idempotent(handler, {
    getUserId: () => "u_1",
    requireKey: true,
    transaction: true,
    run: async (req, { tx }) => {
      const { key } = req.res!.locals.idempotency!;
      const { rows } = await tx.query<{ id: string }>(
        `INSERT INTO ${config.effectsTable} (key, user_id, worker) VALUES ($1, 'u_1', $2) RETURNING id`,
        [key, config.workerId],
      );
      const holdMs = Number((req.body as { holdMs?: unknown }).holdMs ?? 0);
      if (holdMs > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(holdMs, 5_000)));
      return { status: 201, body: { id: `ord_${rows[0]?.id}`, key, worker: config.workerId } };
    },
  }),
);
app.use(((err, _req, res, _next) => {
  logger.error?.({ status: "ROUTE_ERROR", err }, "route failed");
  res.status(500).json({ error: { code: "INTERNAL_ERROR", message: String(err) } });
}) as ErrorRequestHandler);

const server: Server = app.listen(0, "127.0.0.1");
await new Promise<void>((resolve) => server.once("listening", () => resolve()));
process.on("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => void pool.end().finally(() => process.exit(0)));
});
process.stdout.write(
  `${JSON.stringify({ ready: true, workerId: config.workerId, port: (server.address() as { port: number }).port })}\n`,
);
