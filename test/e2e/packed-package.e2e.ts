// What users install: `npm pack`, installed into a project outside this repository, then `npx blocks add`.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO, copyFixture, inProject } from "./harness.js";

describe("the packed package", () => {
  const packs = mkdtempSync(path.join(tmpdir(), "blocks-pack-"));
  const project = copyFixture("hono-bundler");
  const dir = project.dir;

  beforeAll(async () => {
    // dist/ is fresh: the suite's global setup built it, so the pack skips its prepack build.
    const pack = await execa("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", packs], { cwd: REPO });
    const [packed] = JSON.parse(pack.stdout) as Array<{ filename: string }>;
    if (!packed) throw new Error(`npm pack reported no tarball: ${pack.stdout}`);
    const install = await execa(
      "npm",
      ["install", "--no-audit", "--no-fund", "--prefer-offline", path.join(packs, packed.filename)],
      { cwd: dir, reject: false },
    );
    expect(install.exitCode, install.stderr).toBe(0);
  });
  afterAll(() => {
    project.remove();
    rmSync(packs, { recursive: true, force: true });
  });

  it("installs a `blocks` command that carries the registry and templates", () => {
    expect(path.relative(REPO, dir).startsWith("..")).toBe(true);
    expect(existsSync(path.join(dir, "node_modules/backend-blocks/registry/registry.json"))).toBe(true);
    expect(existsSync(path.join(dir, "node_modules/backend-blocks/registry/idempotency/block.json"))).toBe(true);
    expect(existsSync(path.join(dir, "node_modules/backend-blocks/templates/migration.sql"))).toBe(true);
    expect(existsSync(path.join(dir, "node_modules/.bin/blocks"))).toBe(true);
  });

  it("npx blocks init and add idempotency vendor a block that compiles there", async () => {
    // `npx --no-install blocks`: the command the installed package put in node_modules/.bin.
    const init = await inProject(dir, "blocks", ["init", "--yes"]);
    expect(init.exitCode, init.stderr).toBe(0);
    const add = await inProject(dir, "blocks", ["add", "idempotency", "--yes"]);
    expect(add.exitCode, add.stderr).toBe(0);
    expect(existsSync(path.join(dir, "src/blocks/idempotency/adapters/hono.ts"))).toBe(true);
    expect(existsSync(path.join(dir, "blocks.lock.json"))).toBe(true);
    // The schema module compiled into dist/ renders the migration with no block named in CLI code.
    const sql = await inProject(dir, "blocks", ["migrate", "--print"]);
    expect(sql.stdout).toContain("CREATE TABLE IF NOT EXISTS idempotency_records");
    const tsc = await inProject(dir, "tsc", ["--noEmit"]);
    expect(tsc.exitCode, tsc.stdout).toBe(0);
  });
});
