// Choices carry across blocks in one project. Found in a Hono project on Redis only: `add idempotency --store
// redis`, then `add rate-limiter` still vendored the PostgreSQL limiter store and its migration, and `doctor`
// warned that DATABASE_URL was not set.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runAdd } from "../../cli/commands/add.js";
import { runDoctor } from "../../cli/commands/doctor.js";
import { configureOutput } from "../../cli/utils/logger.js";
import { sampleProject, typeCheck } from "./wiring-projects.js";

const LIMITER = "src/blocks/rate-limiter/stores";

describe("choices carry across blocks", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
    configureOutput({ silent: true });
  });

  it("--store redis for idempotency makes the rate limiter's store Redis: no PostgreSQL store or migration, and doctor asks for no DATABASE_URL", async () => {
    const dir = await sampleProject("hono-bundler", ["ioredis"]);
    await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false, store: "redis" });
    const result = await runAdd({ blocks: ["rate-limiter"], cwd: dir, yes: true, install: false });
    expect(result.features).toEqual(["redis-store"]);
    expect(result.migrations).toEqual([]);
    expect(existsSync(path.join(dir, `${LIMITER}/redis-store.ts`))).toBe(true);
    expect(existsSync(path.join(dir, `${LIMITER}/postgres-store.ts`))).toBe(false);
    expect(existsSync(path.join(dir, "migrations"))).toBe(false);
    expect(readFileSync(path.join(dir, "src/blocks/rate-limiter/index.ts"), "utf8")).not.toContain("postgres");
    expect(typeCheck(dir, ["src/blocks/rate-limiter/index.ts"])).toEqual([]);

    vi.stubEnv("DATABASE_URL", "");
    configureOutput({ silent: false });
    const warnings: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => (warnings.push(String(chunk)), true));
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    const doctor = await runDoctor({ cwd: dir });
    vi.restoreAllMocks();
    expect(warnings.join("")).not.toContain("DATABASE_URL");
    expect(doctor.checkedDatabase).toBe(false);
  }, 60_000);

  it("added together with --store redis, both blocks take it; without any choice the rate limiter stays on PostgreSQL", async () => {
    const together = await sampleProject("hono-bundler", ["ioredis"]);
    const both = await runAdd({
      blocks: ["idempotency", "rate-limiter"],
      cwd: together,
      yes: true,
      install: false,
      store: "redis",
    });
    expect(both.migrations).toEqual([]);
    expect(both.files.map((file) => file.target)).toContain(`${LIMITER}/redis-store.ts`);

    const plain = await sampleProject("hono-bundler", []);
    const limiter = await runAdd({ blocks: ["rate-limiter"], cwd: plain, yes: true, install: false });
    expect(limiter.migrations.map((migration) => migration.table)).toEqual(["rate_limits"]);
    expect(limiter.files.map((file) => file.target)).toContain(`${LIMITER}/postgres-store.ts`);
  }, 60_000);

  it.each(["mysql", "sqlite"])(
    "--store %s for idempotency: the rate limiter, which has no such store, keeps its default and says why",
    async (store) => {
      const dir = await sampleProject("hono-bundler", []);
      await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false, store });
      configureOutput({ silent: false });
      const warnings: string[] = [];
      vi.spyOn(process.stderr, "write").mockImplementation((chunk) => (warnings.push(String(chunk)), true));
      vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (warnings.push(String(chunk)), true));
      const result = await runAdd({ blocks: ["rate-limiter"], cwd: dir, yes: true, install: false });
      vi.restoreAllMocks();
      expect(result.features).toContain("postgres-store");
      expect(result.migrations.map((migration) => migration.table)).toEqual(["rate_limits"]);
      expect(warnings.join("")).toContain(
        `--store ${store}, as idempotency was added, is not offered by rate-limiter: it takes its default (pass --store to choose another).`,
      );
      // Adding idempotency again carries its own store.
      const again = await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false, dryRun: true });
      expect(again.features).toContain(`${store}-store`);
    },
    60_000,
  );
});
