// The scenario every fixture goes through: init, add, tsc, vendored tests, then the safety checks.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { blocks, command, copyFixture, inProject } from "./harness.js";

export type FixtureExpectations = {
  fixture: string;
  alias: string | null;
  moduleStyle: "nodenext" | "extensionless";
  framework: string;
  /** How the cron entry must import the wiring module in this project. */
  jobImport: string;
  /** Extra `add` flags (feature choices), and the runtime dependencies they must bring. */
  addArgs?: string[];
  dependencies: string[];
  /** Packages that must NOT be installed at all (features left off). */
  absent: string[];
  /** TypeScript 7 dropped node10 resolution: the compilerOptions a TS 7 user of this project sets instead. */
  ts7Options?: Record<string, string>;
  /** The project has a tsc build: after `add` it passes and emits no test file. */
  build?: { outDir: string };
};

/**
 * @example
 * fixtureSuite({ fixture: "hono-bundler", alias: "~/blocks", moduleStyle: "extensionless", framework: "hono", jobImport: '"~/blocks/idempotency"' });
 */
export function fixtureSuite(expected: FixtureExpectations): void {
  describe(expected.fixture, () => {
    const project = copyFixture(expected.fixture);
    const dir = project.dir;
    const file = (relative: string) => path.join(dir, relative);
    afterAll(() => project.remove());

    beforeAll(async () => {
      const init = await blocks(dir, ["init", "--yes"]);
      expect(init.exitCode, init.stderr).toBe(0);
    });

    it("init detects the alias, module style and package manager", () => {
      const config = JSON.parse(readFileSync(file("blocks.json"), "utf8"));
      expect(config).toMatchObject({
        dir: "src/blocks",
        alias: expected.alias,
        moduleStyle: expected.moduleStyle,
        packageManager: "npm",
      });
    });

    it("without --yes and without a terminal, add exits non-zero naming --yes instead of waiting", async () => {
      const started = Date.now();
      const run = await blocks(dir, ["add", "idempotency"]);
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toContain("DECISION_REQUIRED");
      expect(run.stderr).toContain("--yes");
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(existsSync(file("src/blocks"))).toBe(false);
    });

    it("--dry-run prints the plan and writes nothing", async () => {
      const run = await blocks(dir, ["add", "idempotency", "--dry-run", "--json"]);
      expect(run.exitCode, run.stderr).toBe(0);
      const plan = JSON.parse(run.stdout);
      expect(plan).toMatchObject({ ok: true, dryRun: true, frameworks: [expected.framework] });
      expect(plan.files.length).toBeGreaterThan(10);
      expect(existsSync(file("src/blocks"))).toBe(false);
      expect(existsSync(file("blocks.lock.json"))).toBe(false);
      expect(existsSync(file("migrations"))).toBe(false);
    });

    it("add idempotency --yes vendors the block and its wiring, puts runtime packages in dependencies, and strict tsc --noEmit passes", async () => {
      const run = await blocks(dir, ["add", "idempotency", "--yes", ...(expected.addArgs ?? [])]);
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stdout).toContain("src/idempotency-setup.ts");
      expect(existsSync(file("src/blocks/idempotency/index.ts"))).toBe(true);
      expect(readFileSync(file("src/jobs/idempotency-maintenance.ts"), "utf8")).toContain(
        `from ${expected.jobImport};`,
      );
      const pkg = JSON.parse(readFileSync(file("package.json"), "utf8"));
      expect(pkg.devDependencies).toHaveProperty("vitest");
      expect(Object.keys(pkg.dependencies)).toEqual(expect.arrayContaining(expected.dependencies));
      for (const name of expected.absent) {
        expect(pkg.dependencies).not.toHaveProperty(name);
        expect(pkg.devDependencies).not.toHaveProperty(name);
      }
      const tsc = await inProject(dir, "tsc", ["--noEmit"]);
      expect(tsc.exitCode, tsc.stdout).toBe(0);
    });

    it("the vendored code, tests and wiring also type-check under TypeScript 7", async () => {
      const tsc7 = inject("tsc7");
      expect(tsc7, "typescript@7 could not be installed").not.toBe("");
      const config = expected.ts7Options ? "tsconfig.ts7.json" : "tsconfig.json";
      if (expected.ts7Options)
        writeFileSync(
          file(config),
          JSON.stringify({ extends: "./tsconfig.json", compilerOptions: expected.ts7Options }),
        );
      const tsc = await command(dir, tsc7, ["-p", config, "--noEmit"]);
      expect(tsc.exitCode, tsc.stdout).toBe(0);
    });

    it("the vendored block tests and the wiring's test pass inside the project", async () => {
      // PGlite's first queries compile its WASM paths; on a loaded CI machine that alone can pass vitest's 5 s default.
      const vitest = await inProject(dir, "vitest", ["run", "src", "--testTimeout=60000", "--hookTimeout=60000"]);
      expect(vitest.exitCode, vitest.stdout.slice(-3000)).toBe(0);
      expect(vitest.stdout).toMatch(/Tests\s+\d+ passed/);
      expect(vitest.stdout).toContain("setup/database.test.ts");
    });

    it.runIf(expected.build)("the project's build passes and emits no test or test helper", async () => {
      const build = await command(dir, "npm", ["run", "build"]);
      expect(build.exitCode, build.stdout + build.stderr).toBe(0);
      const emitted = readdirSync(file(expected.build?.outDir ?? "dist"), { recursive: true }).map(String);
      expect(emitted).toContain(path.join("blocks", "idempotency", "handler.js"));
      expect(emitted.filter((name) => name.includes(".test.") || name.includes("testing"))).toEqual([]);
    });

    it("add rate-limiter error-handler --yes vendors the sibling blocks beside idempotency; tsc and their vendored tests pass", async () => {
      const run = await blocks(dir, ["add", "rate-limiter", "error-handler", "--yes", ...(expected.addArgs ?? [])]);
      expect(run.exitCode, run.stderr).toBe(0);
      for (const block of ["rate-limiter", "error-handler"]) {
        expect(existsSync(file(`src/blocks/${block}/index.ts`)), block).toBe(true);
        expect(existsSync(file(`src/blocks/${block}/adapters/${expected.framework}.ts`)), block).toBe(true);
      }
      const tsc = await inProject(dir, "tsc", ["--noEmit"]);
      expect(tsc.exitCode, tsc.stdout).toBe(0);
      const vitest = await inProject(dir, "vitest", [
        "run",
        "src/blocks/rate-limiter",
        "src/blocks/error-handler",
        "--testTimeout=60000",
      ]);
      expect(vitest.exitCode, vitest.stdout.slice(-3000)).toBe(0);
      expect(vitest.stdout).toMatch(/Tests\s+\d+ passed/);
    });

    it("a local edit survives a second add, and diff shows it", async () => {
      const edited = file("src/blocks/idempotency/errors.ts");
      writeFileSync(edited, `${readFileSync(edited, "utf8")}\n// local change: our own error codes\n`);
      const again = await blocks(dir, ["add", "idempotency", "--yes", "--no-install"]);
      expect(again.exitCode, again.stderr).toBe(0);
      expect(again.stderr).toContain("you changed this file");
      expect(readFileSync(edited, "utf8")).toContain("// local change: our own error codes");
      const diff = await blocks(dir, ["diff", "idempotency"]);
      expect(diff.exitCode, diff.stderr).toBe(1); // diff(1)'s convention: 1 = there are differences
      expect(diff.stdout).toContain("src/blocks/idempotency/errors.ts: edited by you");
      expect(diff.stdout).toContain("+// local change: our own error codes");
    });

    it("refuses a registry entry whose target escapes the project", async () => {
      const registry = path.join(path.dirname(dir), "evil-registry");
      mkdirSync(path.join(registry, "evil"), { recursive: true });
      writeFileSync(path.join(registry, "evil/index.ts"), "export const owned = true;\n");
      const entry = { path: "evil/index.ts", target: "../../../escaped.ts" };
      const manifest = {
        version: 1,
        frameworks: {},
        blocks: [{ name: "evil", description: "escapes", files: [entry] }],
      };
      writeFileSync(path.join(registry, "registry.json"), JSON.stringify(manifest));
      const run = await blocks(dir, ["add", "evil", "--yes", "--no-install", "--registry", registry]);
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toContain("TARGET_OUTSIDE_PROJECT");
      expect(existsSync(path.join(path.dirname(dir), "escaped.ts"))).toBe(false);
    });
  });
}
