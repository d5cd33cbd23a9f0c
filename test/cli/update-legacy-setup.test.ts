// A project set up before the wiring became block code: `update` adds the wiring's block files, and replaces the old
// inline module only when nobody edited it.
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runAdd } from "../../cli/commands/add.js";
import { runUpdate } from "../../cli/commands/update.js";
import { readLock, writeLock } from "../../cli/config/lock-file.js";
import { contentHash } from "../../cli/utils/files.js";
import { sampleProject, typeCheck } from "./wiring-projects.js";

const REPO = path.resolve(import.meta.dirname, "../..");
const SETUP = "src/idempotency-setup.ts";
const SETUP_DIR = "src/blocks/idempotency/setup";
const read = (dir: string, file: string) => readFileSync(path.join(dir, file), "utf8");

/**
 * What an `add idempotency` (Express + pg + Prometheus) from before the variants left, on today's block files: a lock
 * with no variants, setup/ holding only the lifecycle and the locked jobs, caches/redis-cache.ts vendored whatever the
 * choice, and the wiring module, its test and its cron entry inline, as that add wrote them (test/fixtures/legacy-wiring).
 */
async function legacyProject(): Promise<string> {
  const dir = await sampleProject("express-nodenext", []);
  await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false, metrics: "prometheus" });
  const lock = await readLock(dir);
  const locked = lock.blocks.idempotency;
  if (!locked) throw new Error("add recorded no idempotency block");
  delete locked.variants;
  const kept = ["lifecycle.ts", "lifecycle.test.ts", "locked-jobs.ts"].map((file) => `${SETUP_DIR}/${file}`);
  for (const file of Object.keys(locked.files))
    if (file.startsWith(`${SETUP_DIR}/`) && !kept.includes(file)) delete locked.files[file];
  for (const entry of readdirSync(path.join(dir, SETUP_DIR))) {
    if (!kept.includes(`${SETUP_DIR}/${entry}`)) rmSync(path.join(dir, SETUP_DIR, entry), { recursive: true });
  }
  const cache = "src/blocks/idempotency/caches/redis-cache.ts";
  const cacheText = read(REPO, "registry/idempotency/caches/redis-cache.ts").replace(
    /from "(\.[^"]+)"/g,
    'from "$1.js"',
  );
  writeFileSync(path.join(dir, cache), cacheText);
  locked.files[cache] = contentHash(cacheText);
  cpSync(path.join(REPO, "test/fixtures/legacy-wiring/src"), path.join(dir, "src"), { recursive: true });
  await writeLock(dir, lock);
  return dir;
}

describe("update on a project whose wiring an older add wrote inline", () => {
  it("untouched: replaces the module with the re-export, adds the variants it was written with, records them, and the project type-checks", async () => {
    const dir = await legacyProject();
    expect(read(dir, SETUP)).toContain("new IdempotencyHandler<Transaction>(");
    const result = await runUpdate({ cwd: dir, yes: true });
    expect(result.files.find((file) => file.target === SETUP)?.status).toBe("replaced");
    expect(read(dir, SETUP)).toContain('export * from "./blocks/idempotency/setup/index.js";');
    expect(read(dir, SETUP)).not.toContain("IdempotencyHandler");
    const added = result.files.filter((file) => file.status === "added").map((file) => file.target);
    expect(added).toEqual(
      expect.arrayContaining([
        "src/blocks/idempotency/setup/database.ts",
        "src/blocks/idempotency/setup/metrics-route.ts",
        "src/blocks/idempotency/setup/index.ts",
      ]),
    );
    // Written for Express with Prometheus: the route on Express, not the none variant.
    expect(read(dir, "src/blocks/idempotency/setup/metrics-route.ts")).toContain("RequestHandler");
    expect((await readLock(dir)).blocks.idempotency?.variants?.["idempotency/setup/metrics.ts"]).toBe(
      "idempotency/setup/metrics-prometheus.ts",
    );
    // Written without the cache: the old add vendored caches/redis-cache.ts anyway, which must not bring the cache back.
    expect((await readLock(dir)).blocks.idempotency?.variants?.["idempotency/setup/cache.ts"]).toBe(
      "idempotency/setup/cache-none.ts",
    );
    expect(result.install.join(" ")).not.toContain("ioredis");
    // The old test and cron entry import what the new module re-exports.
    expect(
      typeCheck(dir, [SETUP, "src/idempotency-setup.test.ts", "src/jobs/idempotency-maintenance.ts", "src/app.ts"]),
    ).toEqual([]);
    expect(result.ok).toBe(true);
  }, 120_000);

  it("edited: leaves the module alone, adds the block files, and says precisely what to change (in --json too)", async () => {
    const dir = await legacyProject();
    const edited = read(dir, SETUP).replace(
      "new Pool({ connectionString: url })",
      "new Pool({ connectionString: url, max: 5 })",
    );
    writeFileSync(path.join(dir, SETUP), edited);
    const result = await runUpdate({ cwd: dir, yes: true, json: true });
    const setup = result.files.find((file) => file.target === SETUP);
    expect(setup?.status).toBe("manual");
    expect(setup && "message" in setup ? setup.message : "").toMatch(
      /you edited it, so it was left alone[^]*src\/blocks\/idempotency\/setup\/[^]*export \* from "\.\/blocks\/idempotency\/setup\/index\.js";/,
    );
    expect(read(dir, SETUP)).toBe(edited);
    expect(result.conflicts).toContain(SETUP);
    expect(result.ok).toBe(false);
    expect(read(dir, "src/blocks/idempotency/setup/database.ts")).toContain("new Pool({ connectionString: url })");
  }, 120_000);

  it("moved away: the lock from before the variants still cannot bring the cache back from caches/redis-cache.ts", async () => {
    const dir = await legacyProject();
    rmSync(path.join(dir, SETUP));
    const result = await runUpdate({ cwd: dir, yes: true });
    expect((await readLock(dir)).blocks.idempotency?.variants?.["idempotency/setup/cache.ts"]).toBe(
      "idempotency/setup/cache-none.ts",
    );
    expect(result.install.join(" ")).not.toContain("ioredis");
  }, 120_000);
});
