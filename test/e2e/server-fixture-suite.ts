// What a server fixture goes through: init, add (detecting its framework), tsc and the build, the vendored
// adapter tests inside the project, then the HTTP checklist against the built server.
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blocks, copyFixture, inProject } from "./harness.js";
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
};

/**
 * @example
 * serverFixtureSuite({ fixture: "koa-esm", adapter: "koa", absent: ["express"], settings: "strict NodeNext", entry: "dist/server.js" });
 */
export function serverFixtureSuite(expected: ServerFixture): void {
  describe(expected.fixture, () => {
    const project = copyFixture(expected.fixture);
    const dir = project.dir;
    const adapter = (name: string) => path.join(dir, `src/blocks/idempotency/adapters/${name}.ts`);
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

    it(`tsc --noEmit passes (${expected.settings}), and the build emits the server without the tests`, async () => {
      const check = await inProject(dir, "tsc", ["--noEmit"]);
      expect(check.exitCode, check.stdout).toBe(0);
      const build = await inProject(dir, "tsc", ["-p", "tsconfig.build.json"]);
      expect(build.exitCode, build.stdout).toBe(0);
      expect(existsSync(path.join(dir, `dist/blocks/idempotency/adapters/${expected.adapter}.test.js`))).toBe(false);
    });

    it(`the vendored ${expected.adapter} route tests pass inside the project`, async () => {
      const vitest = await inProject(dir, "vitest", ["run", "src/blocks/idempotency/adapters"]);
      expect(vitest.exitCode, vitest.stdout.slice(-3000)).toBe(0);
      expect(vitest.stdout).toMatch(/Tests\s+\d+ passed/);
    });

    describe("the built server", () => {
      beforeAll(async () => {
        server = await startServer(dir, "node", [expected.entry], "/runs");
      });
      httpChecklist({ base: () => server!.base, payments: "/payments", runs: "/runs" });
    });
  });
}
