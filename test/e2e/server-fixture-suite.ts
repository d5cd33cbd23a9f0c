// What a server fixture goes through: init, add idempotency then rate-limiter and error-handler (detecting its
// framework), tsc and the build, the vendored adapter tests inside the project, then the HTTP checklist and the
// rate-limited route against the built server.
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
};

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
    afterAll(async () => {
      await server?.stop();
      project.remove();
    });

    beforeAll(async () => {
      const init = await blocks(dir, ["init", "--yes"]);
      expect(init.exitCode, init.stderr).toBe(0);
      const add = await blocks(dir, ["add", "idempotency", "--yes"]);
      expect(add.exitCode, add.stderr).toBe(0);
    });

    it(`add copies the ${expected.adapter} adapter and not ${expected.absent.join(", ")}`, () => {
      expect(existsSync(adapter(expected.adapter))).toBe(true);
      for (const name of expected.absent) expect(existsSync(adapter(name)), name).toBe(false);
    });

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
      for (const block of expected.alsoAdd ?? []) expect(existsSync(path.join(dir, `src/blocks/${block}/index.ts`)), block).toBe(true);
    });

    it.runIf(expected.toolchain)(`npm run ${expected.toolchain?.join(", npm run ")}: the project's own tools pass on every vendored block and leave blocks diff empty`, async () => {
      for (const script of expected.toolchain ?? []) {
        // Nest's lint is type-checked (recommendedTypeChecked): an async function without await, a promise
        // rejected with a non-Error or a method passed unbound fails it, and --fix rewrites what it can.
        const run = await command(dir, "npm", ["run", script]);
        expect(run.exitCode, `npm run ${script}:\n${run.stdout.slice(-6000)}${run.stderr.slice(-2000)}`).toBe(0);
        const diff = await blocks(dir, ["diff"]);
        expect(diff.exitCode, `after npm run ${script}:\n${diff.stdout}`).toBe(0);
      }
      // A type-checked lint of five blocks takes a minute and a half on a loaded CI machine, prettier another.
    }, 600_000);

    it(`tsc --noEmit passes (${expected.settings}), and the build emits the server without the tests`, async () => {
      const check = await inProject(dir, "tsc", ["--noEmit"]);
      expect(check.exitCode, check.stdout).toBe(0);
      const build = await inProject(dir, "tsc", ["-p", "tsconfig.build.json"]);
      expect(build.exitCode, build.stdout).toBe(0);
      expect(existsSync(path.join(dir, `dist/blocks/idempotency/adapters/${expected.adapter}.test.js`))).toBe(false);
    });

    it(`the vendored ${expected.adapter} route tests of the three blocks pass inside the project`, async () => {
      const vitest = await inProject(dir, "vitest", ["run", "src/blocks/idempotency/adapters", "src/blocks/rate-limiter", "src/blocks/error-handler"]);
      expect(vitest.exitCode, vitest.stdout.slice(-3000)).toBe(0);
      expect(vitest.stdout).toMatch(/Tests\s+\d+ passed/);
    });

    describe("the built server", () => {
      beforeAll(async () => {
        server = await startServer(dir, "node", [expected.entry], "/runs");
      });
      httpChecklist({ base: () => server!.base, payments: "/payments", runs: "/runs" });

      it("POST /limited: RateLimit headers, then a 429 RATE_LIMITED problem with Retry-After", async () => {
        const limited = () => fetch(`${server!.base}/limited`, { method: "POST", headers: { "x-user-id": "u_limited" } });
        const first = await limited();
        expect(first.status).toBe(201);
        expect(first.headers.get("ratelimit-policy")).toBe('"limited";q=2;w=60');
        await limited();
        const refused = await limited();
        expect(refused.status).toBe(429);
        expect(refused.headers.get("retry-after")).toBe("30");
        expect(refused.headers.get("content-type")).toBe("application/problem+json");
        expect(await refused.json()).toMatchObject({ status: 429, code: "RATE_LIMITED", instance: "/limited", requestId: expect.any(String) });
      });
    });
  });
}
