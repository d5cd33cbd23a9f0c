// What a server fixture goes through: init, add idempotency then rate-limiter and error-handler (detecting its
// framework), tsc and the build, the vendored adapter tests inside the project, then the HTTP checklist and the
// rate-limited route against the built server (and, for a project with an ORM and DATABASE_URL, its transactional route).
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase } from "../cli/fresh-database.js";
import { blocks, command, copyFixture, inProject } from "./harness.js";
import { httpChecklist } from "./http-checklist.js";
import { startServer, type RunningServer } from "./http-server.js";

export type ServerFixture = {
  fixture: string;
  /** The adapter `add` must copy, and adapters it must leave out. */
  adapter: string;
  absent: string[];
  /** What the fixture's tsconfig exercises, for the test's name. */
  settings: string;
  /** The built server's entry, run with node. */
  entry: string;
  /** The project's own format and lint scripts, as its framework's generator writes them: run after `add`, they must pass and leave `blocks diff` empty. */
  toolchain?: string[];
  /** Blocks added besides the three the server mounts, so the project's own lint sees their code too. */
  alsoAdd?: string[];
  /**
   * The project's ORM (its `--client` choice), which `add` must detect and wire the store on. With DATABASE_URL the
   * server runs on a database of its own through it, and `route` (POST `{ id, amount }`) writes a row of `table` in
   * the transaction that records its key, failing after the write when the request has `x-fail-after-write`.
   */
  orm?: { client: string; route: string; table: string };
  /** The project's package.json already lists every package `add` needs (`nest new` installs them itself): `npm install` before init. */
  install?: boolean;
  /** The build is the project's own `npm run build` (`nest build`), not `tsc -p tsconfig.build.json`. */
  buildScript?: boolean;
  /** The project's vitest.config.ts leaves the vendored tests out (Nest 12's `**\/*.spec.ts`): `add` must say so, and the glob it names goes into test.include before they run. */
  testInclude?: string;
  /** The built server's environment besides PORT and DATABASE_URL. */
  serverEnv?: Record<string, string>;
};

const DATABASE_URL = process.env.DATABASE_URL;

/**
 * @example
 * serverFixtureSuite({ fixture: "koa-esm", adapter: "koa", absent: ["express"], settings: "strict NodeNext", entry: "dist/server.js" });
 */
export function serverFixtureSuite(expected: ServerFixture): void {
  describe(expected.fixture, () => {
    const project = copyFixture(expected.fixture);
    const dir = project.dir;
    const adapter = (name: string, block = "idempotency") => path.join(dir, `src/blocks/${block}/adapters/${name}.ts`);
    let server: RunningServer | undefined;
    let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
    afterAll(async () => {
      await server?.stop();
      await database?.drop();
      project.remove();
    });

    beforeAll(async () => {
      if (expected.install) {
        const install = await command(dir, "npm", ["install"]);
        expect(install.exitCode, install.stderr.slice(-3000)).toBe(0);
      }
      const init = await blocks(dir, ["init", "--yes"]);
      expect(init.exitCode, init.stderr).toBe(0);
      const add = await blocks(dir, ["add", "idempotency", "--yes"]);
      expect(add.exitCode, add.stderr).toBe(0);
      if (expected.testInclude) {
        expect(add.stdout).toContain(`add "${expected.testInclude}" to its test.include`);
        const config = path.join(dir, "vitest.config.ts");
        writeFileSync(
          config,
          readFileSync(config, "utf8").replace("include: [", `include: ['${expected.testInclude}', `),
        );
      }
    });

    it(`add copies the ${expected.adapter} adapter and not ${expected.absent.join(", ")}`, () => {
      expect(existsSync(adapter(expected.adapter))).toBe(true);
      for (const name of expected.absent) expect(existsSync(adapter(name)), name).toBe(false);
    });

    it.runIf(expected.orm)(
      `add detects ${expected.orm?.client}: the store and executeInTransaction run on the project's own client, and no pg client adapter is copied`,
      () => {
        const client = expected.orm?.client ?? "";
        expect(existsSync(path.join(dir, `src/blocks/idempotency/stores/clients/${client}.ts`))).toBe(true);
        expect(existsSync(path.join(dir, "src/blocks/idempotency/stores/clients/pg.ts"))).toBe(false);
        expect(readFileSync(path.join(dir, "src/blocks/idempotency/setup/database.ts"), "utf8")).toContain(
          `${client}Client(db)`,
        );
      },
    );

    // Before the build: the fixture's server mounts a route on both sibling blocks.
    it(`add rate-limiter error-handler copies their ${expected.adapter} adapters and not ${expected.absent.join(", ")}`, async () => {
      const add = await blocks(dir, ["add", "rate-limiter", "error-handler", "--yes"]);
      expect(add.exitCode, add.stderr).toBe(0);
      for (const block of ["rate-limiter", "error-handler"]) {
        expect(existsSync(adapter(expected.adapter, block)), block).toBe(true);
        for (const name of expected.absent) expect(existsSync(adapter(name, block)), `${block}: ${name}`).toBe(false);
      }
    });

    // What users of the framework run on every commit: it must find the vendored code as it formats it, so
    // `blocks diff` (and so `update`) sees no edit. (Found: NestJS's `npm run lint` rewrote 89 vendored files.)
    it.runIf(expected.alsoAdd)(`add ${expected.alsoAdd?.join(" ")} vendors them beside the others`, async () => {
      const add = await blocks(dir, ["add", ...(expected.alsoAdd ?? []), "--yes"]);
      expect(add.exitCode, add.stderr).toBe(0);
      for (const block of expected.alsoAdd ?? [])
        expect(existsSync(path.join(dir, `src/blocks/${block}/index.ts`)), block).toBe(true);
    });

    it.runIf(expected.toolchain)(
      `npm run ${expected.toolchain?.join(", npm run ")}: the project's own tools pass on every vendored block and leave blocks diff empty`,
      async () => {
        for (const script of expected.toolchain ?? []) {
          // Nest's lint is type-checked (recommendedTypeChecked): an async function without await, a promise
          // rejected with a non-Error or a method passed unbound fails it, and --fix rewrites what it can.
          const run = await command(dir, "npm", ["run", script]);
          expect(run.exitCode, `npm run ${script}:\n${run.stdout.slice(-6000)}${run.stderr.slice(-2000)}`).toBe(0);
          const diff = await blocks(dir, ["diff"]);
          expect(diff.exitCode, `after npm run ${script}:\n${diff.stdout}`).toBe(0);
        }
        // A type-checked lint of five blocks takes a minute and a half on a loaded CI machine, prettier another.
      },
      600_000,
    );

    it(`tsc --noEmit passes (${expected.settings}), and the build emits the server without the tests`, async () => {
      const check = await inProject(dir, "tsc", ["--noEmit"]);
      expect(check.exitCode, check.stdout).toBe(0);
      const build = expected.buildScript
        ? await command(dir, "npm", ["run", "build"])
        : await inProject(dir, "tsc", ["-p", "tsconfig.build.json"]);
      expect(build.exitCode, build.stdout + build.stderr).toBe(0);
      expect(existsSync(path.join(dir, `dist/blocks/idempotency/adapters/${expected.adapter}.test.js`))).toBe(false);
    });

    it(`the vendored ${expected.adapter} route tests of the three blocks pass inside the project`, async () => {
      const vitest = await inProject(dir, "vitest", [
        "run",
        "src/blocks/idempotency/adapters",
        "src/blocks/rate-limiter",
        "src/blocks/error-handler",
      ]);
      expect(vitest.exitCode, vitest.stdout.slice(-3000)).toBe(0);
      expect(vitest.stdout).toMatch(/Tests\s+\d+ passed/);
    });

    describe("the built server", () => {
      beforeAll(async () => {
        // With an ORM and DATABASE_URL: the blocks' tables on a database of the suite's own, and the server on it.
        if (expected.orm && DATABASE_URL) {
          database = await freshDatabase(DATABASE_URL);
          const migrate = await blocks(dir, ["migrate", "--apply"], { DATABASE_URL: database.url });
          expect(migrate.exitCode, migrate.stdout + migrate.stderr).toBe(0);
        }
        server = await startServer(dir, "node", [expected.entry], "/runs", {
          env: { ...expected.serverEnv, ...(database ? { DATABASE_URL: database.url } : {}) },
        });
      });
      httpChecklist({ base: () => server!.base, payments: "/payments", runs: "/runs" });

      it.runIf(expected.orm && DATABASE_URL)(
        `[DATABASE_URL] the wiring's own test passes on ${expected.orm?.client}`,
        async () => {
          const vitest = await inProject(
            dir,
            "vitest",
            ["run", "src/blocks/idempotency/setup/database.test.ts", "--testTimeout=60000"],
            { DATABASE_URL: database?.url },
          );
          expect(vitest.exitCode, vitest.stdout.slice(-3000)).toBe(0);
          expect(vitest.stdout).toMatch(/Tests\s+\d+ passed/);
          expect(vitest.stdout).not.toMatch(/skipped/);
        },
      );

      it.runIf(expected.orm && DATABASE_URL)(
        `[DATABASE_URL] POST ${expected.orm?.route}: the ${expected.orm?.client} write and the key's record commit together, and a failure after the write leaves neither`,
        async () => {
          const { route, table } = expected.orm as NonNullable<ServerFixture["orm"]>;
          const key = randomUUID();
          const id = `order_${key.slice(0, 8)}`;
          const send = (headers: Record<string, string> = {}) =>
            fetch(server!.base + route, {
              method: "POST",
              headers: {
                "content-type": "application/json",
                "idempotency-key": key,
                "x-user-id": "u_orders",
                ...headers,
              },
              body: JSON.stringify({ id, amount: 5 }),
            });
          const rows = async () => {
            const client = new pg.Client({ connectionString: database?.url });
            await client.connect();
            try {
              const count = async (sql: string, value: string) =>
                (await client.query<{ n: number }>(sql, [value])).rows[0]?.n;
              return {
                written: await count(`SELECT count(*)::int AS n FROM ${table} WHERE id = $1`, id),
                records: await count("SELECT count(*)::int AS n FROM idempotency_records WHERE key = $1", key),
              };
            } finally {
              await client.end();
            }
          };
          const failed = await send({ "x-fail-after-write": "1" });
          expect(failed.status).toBe(500);
          expect(await rows()).toEqual({ written: 0, records: 0 });
          const created = await send();
          expect(created.status).toBe(201);
          expect(await created.json()).toEqual({ id, amount: 5 });
          expect(await rows()).toEqual({ written: 1, records: 1 });
          const replayed = await send();
          expect(replayed.status).toBe(201);
          expect(replayed.headers.get("idempotent-replayed")).toBe("true");
          expect(await rows()).toEqual({ written: 1, records: 1 });
        },
      );

      it("POST /limited: RateLimit headers, then a 429 RATE_LIMITED problem with Retry-After", async () => {
        const limited = () =>
          fetch(`${server!.base}/limited`, { method: "POST", headers: { "x-user-id": "u_limited" } });
        const first = await limited();
        expect(first.status).toBe(201);
        expect(first.headers.get("ratelimit-policy")).toBe('"limited";q=2;w=60');
        await limited();
        const refused = await limited();
        expect(refused.status).toBe(429);
        expect(refused.headers.get("retry-after")).toBe("30");
        expect(refused.headers.get("content-type")).toBe("application/problem+json");
        expect(await refused.json()).toMatchObject({
          status: 429,
          code: "RATE_LIMITED",
          instance: "/limited",
          requestId: expect.any(String),
        });
      });
    });
  });
}
