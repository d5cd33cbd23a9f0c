// Exactness across processes: two processes, 50 concurrent requests for one user, limit 10 -> exactly 10 pass.
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { PostgresRateLimitStore } from "@/blocks/rate-limiter/stores/postgres-store";
import { dropStatements } from "@/blocks/rate-limiter/stores/postgres-schema";
import { databaseUrl, openPool, openRedis, redisUrl, uniqueName } from "./support/stores";

const WORKER = fileURLToPath(new URL("./support/exactness-worker.ts", import.meta.url));
const PER_PROCESS = 25;

function start(kind: string, name: string): Promise<ChildProcess> {
  const child = fork(WORKER, [kind, name, String(PER_PROCESS)], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    child.once("message", () => resolve(child));
    child.once("exit", (code) => reject(new Error(`worker exited with ${code} before it was ready`)));
  });
}

/** Starts both processes, lets them fire at the same moment, and adds up what they were allowed. */
async function race(kind: string, name: string): Promise<number> {
  const children = await Promise.all([start(kind, name), start(kind, name)]);
  const allowed = children.map(
    (child) => new Promise<number>((resolve) => child.once("message", (m: { allowed: number }) => resolve(m.allowed))),
  );
  for (const child of children) child.send("go");
  const counts = await Promise.all(allowed);
  return counts.reduce((a, b) => a + b, 0);
}

describe.skipIf(!redisUrl)("[REDIS_URL] exactness on Redis", () => {
  it("two processes, 50 concurrent requests, limit 10: exactly 10 pass", { timeout: 60_000 }, async () => {
    const prefix = `${uniqueName("rl_exact")}:`;
    const redis = await openRedis();
    try {
      expect(await race("redis", prefix)).toBe(10);
    } finally {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  });
});

describe.skipIf(!databaseUrl)("[DATABASE_URL] exactness on PostgreSQL", () => {
  it("two processes, 50 concurrent requests, limit 10: exactly 10 pass", { timeout: 60_000 }, async () => {
    const pool = await openPool(undefined, 2);
    const store = new PostgresRateLimitStore(pool, { table: uniqueName("rl_exact") });
    await store.createSchema();
    try {
      expect(await race("postgres", store.table)).toBe(10);
    } finally {
      for (const statement of dropStatements(store.table)) await pool.query(statement);
      await pool.end();
    }
  });
});
