// Koa, ESM + NodeNext, no alias: init, add (detects koa), tsc, the vendored Koa tests, then the HTTP checklist on the built server.
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blocks, copyFixture, inProject } from "./harness.js";
import { httpChecklist } from "./http-checklist.js";
import { startServer, type RunningServer } from "./http-server.js";

describe("koa-esm", () => {
  const project = copyFixture("koa-esm");
  const dir = project.dir;
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

  it("add copies the Koa adapter and no other framework's", () => {
    expect(existsSync(path.join(dir, "src/blocks/idempotency/adapters/koa.ts"))).toBe(true);
    expect(existsSync(path.join(dir, "src/blocks/idempotency/adapters/express.ts"))).toBe(false);
    expect(existsSync(path.join(dir, "src/blocks/idempotency/adapters/nestjs.ts"))).toBe(false);
  });

  it("tsc --noEmit passes under strict NodeNext settings, and the build emits the server", async () => {
    const check = await inProject(dir, "tsc", ["--noEmit"]);
    expect(check.exitCode, check.stdout).toBe(0);
    const build = await inProject(dir, "tsc", ["-p", "tsconfig.build.json"]);
    expect(build.exitCode, build.stdout).toBe(0);
    expect(existsSync(path.join(dir, "dist/blocks/idempotency/adapters/koa.test.js"))).toBe(false);
  });

  it("the vendored Koa route tests pass inside the project", async () => {
    const vitest = await inProject(dir, "vitest", ["run", "src/blocks/idempotency/adapters"]);
    expect(vitest.exitCode, vitest.stdout.slice(-3000)).toBe(0);
    expect(vitest.stdout).toMatch(/Tests\s+\d+ passed/);
  });

  describe("the built server", () => {
    beforeAll(async () => {
      server = await startServer(dir, "node", ["dist/server.js"], "/runs");
    });
    httpChecklist({ base: () => server!.base, payments: "/payments", runs: "/runs" });
  });
});
