// A production install: add with the Redis cache (ioredis is declared), build, `npm ci --omit=dev`, boot the built server
// on PostgreSQL + Redis, answer one idempotent request and its replay, and exit on SIGTERM with every client closed.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { execa } from "execa";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { blocks, command, copyFixture } from "./harness.js";

const url = process.env.DATABASE_URL;
const redisUrl = process.env.REDIS_URL;

describe("production install", () => {
  const project = copyFixture("express-production");
  const dir = project.dir;
  const table = `blocks_prod_${process.pid}`;
  afterAll(async () => {
    project.remove();
    if (!url) return;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`DROP TABLE IF EXISTS ${table}, ${table}_retries`);
    await client.end();
  });

  it.skipIf(!url || !redisUrl)(
    "[DATABASE_URL] [REDIS_URL] builds, installs without dev packages, boots PostgresStore + RedisCache and replays",
    async () => {
      expect((await blocks(dir, ["init", "--yes"])).exitCode).toBe(0);
      const add = await blocks(dir, ["add", "idempotency", "--yes", "--table", table]);
      expect(add.exitCode, add.stderr).toBe(0);
      const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
      expect(Object.keys(pkg.dependencies).sort()).toEqual(["express", "ioredis", "pg"]);
      expect(pkg.scripts.build).toBe("tsc -p tsconfig.build.json");
      expect((await blocks(dir, ["migrate", "--apply", "--table", table], { DATABASE_URL: url })).exitCode).toBe(0);

      const build = await command(dir, "npm", ["run", "build"]);
      expect(build.exitCode, build.stdout + build.stderr).toBe(0);
      expect(
        readdirSync(path.join(dir, "dist"), { recursive: true })
          .map(String)
          .filter((name) => name.includes("test")),
      ).toEqual([]);
      const ci = await command(dir, "npm", ["ci", "--omit=dev"]);
      expect(ci.exitCode, ci.stderr).toBe(0);
      expect(existsSync(path.join(dir, "node_modules/vitest"))).toBe(false);

      const server = execa("node", ["dist/server.js"], {
        cwd: dir,
        env: { DATABASE_URL: url, REDIS_URL: redisUrl },
        reject: false,
        buffer: false,
        stdin: "ignore",
      });
      let output = "";
      const port = await new Promise<string>((resolve, reject) => {
        server.stdout?.on("data", (chunk: Buffer) => {
          output += chunk.toString();
          const match = /READY (\d+)/.exec(output);
          if (match?.[1]) resolve(match[1]);
        });
        server.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
        void server.then(() => reject(new Error(`the server exited: ${output}`)));
      });
      const post = () =>
        fetch(`http://127.0.0.1:${port}/payments`, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": `k-${process.pid}`, "x-user-id": "u_1" },
          body: JSON.stringify({ amount: 100 }),
        });
      const first = await post();
      const replay = await post();
      expect(first.status, output).toBe(201);
      const body = await first.text();
      expect(body).toBe('{"id":"pay_1","amount":100}');
      expect(await replay.text()).toBe(body);

      const started = Date.now();
      server.kill("SIGTERM");
      const exited = await server;
      // The maintenance timers, the pool and the Redis client are closed: nothing keeps the process alive.
      expect(exited.signal ?? exited.exitCode).toBeDefined();
      expect(Date.now() - started).toBeLessThan(10_000);
    },
  );
});
