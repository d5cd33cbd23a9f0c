// An npm workspaces monorepo: init at the root names the packages and, with no terminal, fails naming --cwd; with --cwd it targets that package.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { blocks, copyFixture } from "./harness.js";

describe("npm workspaces", () => {
  const project = copyFixture("npm-workspaces");
  const dir = project.dir;
  afterAll(() => project.remove());

  it("init at the root writes nothing and names the workspaces and --cwd", async () => {
    for (const args of [["init"], ["init", "--yes"]]) {
      const run = await blocks(dir, args);
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toContain("WORKSPACE_ROOT");
      expect(run.stderr).toContain("apps/api, packages/shared");
      expect(run.stderr).toContain("--cwd apps/api");
    }
    expect(existsSync(path.join(dir, "blocks.json"))).toBe(false);
  });

  it("init --cwd apps/api configures that package, and add plans into it with npx hints", async () => {
    const init = await blocks(dir, ["init", "--yes", "--cwd", "apps/api"]);
    expect(init.exitCode, init.stderr).toBe(0);
    expect(JSON.parse(readFileSync(path.join(dir, "apps/api/blocks.json"), "utf8"))).toMatchObject({
      dir: "src/blocks",
      alias: "@/blocks",
    });
    const plan = await blocks(dir, ["add", "idempotency", "--dry-run", "--json", "--cwd", "apps/api"]);
    expect(plan.exitCode, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout)).toMatchObject({ root: path.join(dir, "apps/api"), frameworks: ["hono"] });
  });
});
