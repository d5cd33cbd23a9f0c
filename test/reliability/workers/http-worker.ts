// A worker process serving the protected route over real HTTP on 127.0.0.1 (port 0), with optional maintenance jobs.
import type { Server } from "node:http";
import { startRuntime } from "./worker-runtime";

const runtime = await startRuntime();
const { config, handler, logger } = runtime;

const server: Server = await (async () => {
  if (config.framework === "hono") {
    const { honoServer } = await import("./hono-app");
    return honoServer(runtime);
  }
  if (config.framework === "fastify") {
    const { fastifyServer } = await import("./fastify-app");
    return fastifyServer(runtime);
  }
  const { expressApp } = await import("./express-app");
  return expressApp(runtime).listen(0, "127.0.0.1");
})();
await new Promise<void>((resolve) => (server.listening ? resolve() : server.once("listening", () => resolve())));

const timers: NodeJS.Timeout[] = [];
if (config.jobs) {
  const { everyMs, recoverAfterMs } = config.jobs;
  // As the maintenance-job stub runs them; a failed run (store down) is logged and tried again next time.
  const job = (name: string, run: () => Promise<unknown>) =>
    setInterval(
      () => run().catch((err) => logger.warn({ status: "JOB_FAILED", job: name, err }, "maintenance job failed")),
      everyMs,
    );
  timers.push(job("recover", () => handler.recoverStuckRecords({ timeoutInMs: recoverAfterMs, limit: 100 })));
  timers.push(job("cleanup", () => handler.cleanupExpiredRecords({ limit: 500 })));
}

process.on("SIGTERM", () => {
  for (const timer of timers) clearInterval(timer);
  server.closeAllConnections();
  server.close(() => void runtime.close().finally(() => process.exit(0)));
});
runtime.announceReady((server.address() as { port: number }).port);
