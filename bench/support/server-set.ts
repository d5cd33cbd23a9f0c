// Starts the servers of one comparison group, each with its own table and Redis prefix, and stops them all.
import type pg from "pg";
import { settings } from "../config";
import type { Backend, Framework, ServerSpec, Style, Variant } from "../servers/spec";
import { createRateLimitTable, createRunTable, runId } from "./services";
import { startServer, type RunningServer } from "./spawn-server";

export type ServerWish = {
  framework: Framework;
  variant: Variant;
  backend: Backend;
  style?: Style;
  limiterHeaders?: boolean;
  peerModule?: string;
};

export type ServerSet = { servers: RunningServer[]; stopAll(): Promise<void> };

const USES_POSTGRES: Backend[] = ["postgres", "postgres-prepared", "postgres+redis"];

export async function startServerSet(pool: pg.Pool, group: string, wishes: ServerWish[]): Promise<ServerSet> {
  const servers: RunningServer[] = [];
  const stopAll = async () => {
    for (const server of servers.splice(0)) await server.stop();
  };
  try {
    for (const [index, wish] of wishes.entries()) {
      const limited = wish.variant === "rate-limited";
      const needsTable = !limited && (USES_POSTGRES.includes(wish.backend) || wish.variant === "floor");
      const spec: ServerSpec = {
        ...wish,
        table: needsTable ? await createRunTable(pool, `${group}_${index}`) : undefined,
        rateLimitTable:
          limited && wish.backend === "postgres" ? await createRateLimitTable(pool, `${group}_${index}_rl`) : undefined,
        redisPrefix: `bench:${runId}:${group}:${index}:`,
        databaseUrl: settings.databaseUrl,
        redisUrl: settings.redisUrl,
        poolSize: settings.poolSize,
      };
      servers.push(await startServer(spec));
    }
    return { servers, stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
