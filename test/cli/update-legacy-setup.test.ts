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

/** What an older add was given, the setup/ files it vendored beside the lifecycle, and its inline modules (test/fixtures/<fixture>). */
type LegacyAdd = {
  packages: string[];
  options: Partial<Parameters<typeof runAdd>[0]>;
  setup: string[];
  fixture: string;
};

const PG_PROMETHEUS: LegacyAdd = {
  packages: [],
  options: { metrics: "prometheus" },
  setup: ["locked-jobs.ts"],
  fixture: "legacy-wiring",
};

/**
 * What an `add idempotency` (Express + pg + Prometheus by default) from before the variants left, on today's block files: a lock
 * with no variants, setup/ holding only the lifecycle and the locked jobs, caches/redis-cache.ts vendored whatever the
 * choice, and the wiring module, its test and its cron entry inline, as that add wrote them (test/fixtures/legacy-wiring).
 */
async function legacyProject(old: LegacyAdd = PG_PROMETHEUS): Promise<string> {
  const dir = await sampleProject("express-nodenext", old.packages);
  await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false, ...old.options });
  const lock = await readLock(dir);
  const locked = lock.blocks.idempotency;
  if (!locked) throw new Error("add recorded no idempotency block");
  delete locked.variants;
  const kept = ["lifecycle.ts", "lifecycle.test.ts", ...old.setup].map((file) => `${SETUP_DIR}/${file}`);
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
  cpSync(path.join(REPO, "test/fixtures", old.fixture, "src"), path.join(dir, "src"), { recursive: true });
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

// That add wrote MySqlStore's module on a mysql2 pool of its own even beside Drizzle or Kysely (whose adapter it vendored):
// its Database is a Pool and its Transaction mysql2's, which the app's code and the module's own test were written against.
describe.each(["drizzle-orm", "kysely"])(
  "update on a MySQL project on %s whose wiring an older add wrote inline",
  (orm) => {
    const MYSQL: LegacyAdd = {
      packages: [orm, "mysql2"],
      options: { store: "mysql" },
      setup: ["recovery-jobs.ts", "recovery-jobs.test.ts"],
      fixture: "legacy-wiring-mysql",
    };
    const databaseVariant = async (dir: string) =>
      (await readLock(dir)).blocks.idempotency?.variants?.["idempotency/setup/database.ts"];

    it("untouched: replaced, and setup/database.ts stays on the mysql2 pool it was written for, so the app and its old test still type-check", async () => {
      const dir = await legacyProject(MYSQL);
      expect(read(dir, SETUP)).toContain("export type Database = Pool;");
      const result = await runUpdate({ cwd: dir, yes: true });
      expect(result.files.find((file) => file.target === SETUP)?.status).toBe("replaced");
      expect(await databaseVariant(dir)).toBe("idempotency/setup/database-mysql2.ts");
      expect(typeCheck(dir, [SETUP, "src/idempotency-setup.test.ts", "src/jobs/idempotency-maintenance.ts"])).toEqual(
        [],
      );
      expect(result.ok).toBe(true);
    }, 120_000);

    it("edited or moved away: the module that add wrote was on mysql2 all the same, and so is setup/database.ts", async () => {
      const edited = await legacyProject(MYSQL);
      writeFileSync(
        path.join(edited, SETUP),
        read(edited, SETUP).replace("return createPool(url);", "return createPool({ uri: url, connectionLimit: 5 });"),
      );
      await runUpdate({ cwd: edited, yes: true });
      expect(await databaseVariant(edited)).toBe("idempotency/setup/database-mysql2.ts");
      const moved = await legacyProject(MYSQL);
      rmSync(path.join(moved, SETUP));
      await runUpdate({ cwd: moved, yes: true });
      expect(await databaseVariant(moved)).toBe("idempotency/setup/database-mysql2.ts");
    }, 120_000);

    it("a project that add sets up today gets the wiring on its ORM, and update keeps it", async () => {
      const dir = await sampleProject("express-nodenext", MYSQL.packages);
      await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false });
      const variant = `idempotency/setup/database-${orm === "kysely" ? "kysely" : "drizzle"}-mysql2.ts`;
      expect(await databaseVariant(dir)).toBe(variant);
      await runUpdate({ cwd: dir, yes: true });
      expect(await databaseVariant(dir)).toBe(variant);
    }, 120_000);
  },
);
