// Entry point of one benchmark server process: builds the app from the spec in argv, listens on loopback.
import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Closable } from "./block-handler";
import type { ServerSpec } from "./spec";

async function listen(spec: ServerSpec): Promise<{ server: Server } & Closable> {
  if (spec.framework === "express") {
    const { expressApp } = await import("./express-app");
    const { app, close } = await expressApp(spec);
    const server = app.listen(0, "127.0.0.1");
    await once(server, "listening");
    return { server, close };
  }
  if (spec.framework === "fastify") {
    const { fastifyApp } = await import("./fastify-app");
    const { app, close } = await fastifyApp(spec);
    await app.listen({ port: 0, host: "127.0.0.1" });
    return { server: app.server, close: async () => (await app.close(), await close()) };
  }
  if (spec.framework === "hono") return (await import("./hono-app")).honoServer(spec);
  if (spec.framework === "koa") return (await import("./koa-app")).koaServer(spec);
  if (spec.framework === "fetch") return (await import("./fetch-app")).fetchServer(spec);
  return (await import("./nestjs-app")).nestServer(spec);
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? "") as ServerSpec;
  const { server, close } = await listen(spec);
  if (!server.listening) await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    server.closeAllConnections?.();
    server.close();
    await close().catch(() => {});
    // Exit explicitly: --cpu-prof writes its profile on a normal exit, and stray handles must not keep us alive.
    process.exit(0);
  };
  process.on("message", (message: { type?: string }) => void (message?.type === "stop" && stop()));
  // The parent died or went away: never outlive it.
  process.on("disconnect", () => void stop());
  // The parent went away while we started (Ctrl-C): nobody to report to.
  if (!process.connected) return stop();
  process.send?.({ type: "ready", port });
}

main().catch((err) => {
  console.error("[bench server]", err);
  process.exit(1);
});
