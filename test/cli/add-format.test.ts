// `add` writes what the project's own formatter would: found in a NestJS project, where `npm run lint`
// (eslint --fix with Prettier) rewrote 89 vendored files and `blocks diff` then listed every one as edited.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { runAdd } from "../../cli/commands/add.js";
import { runDiff } from "../../cli/commands/diff.js";
import { runUpdate } from "../../cli/commands/update.js";
import { contentHash } from "../../cli/utils/files.js";
import { sampleProject } from "./wiring-projects.js";

const REPO = path.resolve(import.meta.dirname, "../..");
const bin = (name: string) => path.join(REPO, "node_modules/.bin", name);
const INDEX = "src/blocks/idempotency/index.ts";
/** What `add` wrote: the blocks, the wiring module with its test, and the lock (the fixture's own files are not ours to judge). */
const WRITTEN = ["src/blocks", "src/idempotency-setup.ts", "blocks.lock.json"];

/** A sample project that declares `pkg` as a dev dependency (installed through the linked node_modules). */
async function projectWith(pkg: string, files: Record<string, string>): Promise<string> {
  const dir = await sampleProject("hono-bundler", []);
  const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as {
    devDependencies: Record<string, string>;
  };
  manifest.devDependencies[pkg] = "*";
  writeFileSync(path.join(dir, "package.json"), JSON.stringify(manifest, null, 2));
  for (const [file, content] of Object.entries(files)) writeFileSync(path.join(dir, file), content);
  return dir;
}

function lockedHash(dir: string, file: string): string | undefined {
  const lock = JSON.parse(readFileSync(path.join(dir, "blocks.lock.json"), "utf8")) as {
    blocks: Record<string, { files: Record<string, string> }>;
  };
  return Object.values(lock.blocks)
    .map((block) => block.files[file])
    .find(Boolean);
}

describe("add formats with the project's formatter", () => {
  it("Prettier (NestJS's .prettierrc): the project's `prettier --check` passes, the lock records the formatted bytes, and `prettier --write` leaves `blocks diff` empty", async () => {
    const dir = await projectWith("prettier", {
      ".prettierrc": JSON.stringify({ singleQuote: true, trailingComma: "all" }),
    });
    await runAdd({ blocks: ["idempotency", "rate-limiter", "error-handler"], cwd: dir, yes: true, install: false });
    const index = readFileSync(path.join(dir, INDEX), "utf8");
    expect(index).toContain("from './");
    expect(lockedHash(dir, INDEX)).toBe(contentHash(index));
    const check = await execa(bin("prettier"), ["--check", ...WRITTEN], { cwd: dir, reject: false });
    expect(check.exitCode, check.stdout + check.stderr).toBe(0);
    await execa(bin("prettier"), ["--write", ...WRITTEN], { cwd: dir });
    expect((await runDiff({ cwd: dir })).changes).toEqual([]);
  }, 120_000);

  it("Prettier: the build's tsconfig.build.json and package.json that add edits are written in the project's style too", async () => {
    const dir = await sampleProject("express-nodenext", []);
    const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as {
      devDependencies?: Record<string, string>;
    };
    manifest.devDependencies = { ...manifest.devDependencies, prettier: "*" };
    writeFileSync(path.join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    writeFileSync(path.join(dir, ".prettierrc"), JSON.stringify({ singleQuote: true, printWidth: 100 }));
    const result = await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false });
    expect(result.build).toMatchObject({ kind: "edit" });
    const check = await execa(bin("prettier"), ["--check", "tsconfig.build.json", "package.json"], {
      cwd: dir,
      reject: false,
    });
    expect(check.exitCode, check.stdout + check.stderr).toBe(0);
    expect(readFileSync(path.join(dir, "tsconfig.build.json"), "utf8")).toMatch(/"exclude": \[".*"\]/);
  }, 120_000);

  it("Biome (biome.json): `biome format` finds nothing to change, and `update` sees no edit after `biome format --write`", async () => {
    const dir = await projectWith("@biomejs/biome", {
      "biome.json": JSON.stringify({
        formatter: { indentStyle: "space", lineWidth: 100 },
        javascript: { formatter: { quoteStyle: "single" } },
      }),
    });
    await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false });
    expect(readFileSync(path.join(dir, INDEX), "utf8")).toContain("from './");
    const check = await execa(bin("biome"), ["format", ...WRITTEN], { cwd: dir, reject: false });
    expect(check.exitCode, check.stdout + check.stderr).toBe(0);
    await execa(bin("biome"), ["format", "--write", ...WRITTEN], { cwd: dir });
    expect((await runDiff({ cwd: dir })).changes).toEqual([]);
    const update = await runUpdate({ cwd: dir, yes: true });
    expect(update.files.filter((file) => file.status !== "unchanged")).toEqual([]);
  }, 240_000);

  it("Biome as `biome init` sets it up (recommended lint, sorted imports): `biome check` passes on all four blocks, and `biome check --write` leaves `blocks diff` empty", async () => {
    const dir = await projectWith("@biomejs/biome", {});
    await execa(bin("biome"), ["init"], { cwd: dir });
    await runAdd({
      blocks: ["idempotency", "rate-limiter", "error-handler", "logger"],
      cwd: dir,
      yes: true,
      install: false,
    });
    const check = await execa(bin("biome"), ["check", ...WRITTEN], { cwd: dir, reject: false });
    expect(check.exitCode, check.stdout + check.stderr).toBe(0);
    await execa(bin("biome"), ["check", "--write", ...WRITTEN], { cwd: dir });
    expect((await runDiff({ cwd: dir })).changes).toEqual([]);
  }, 240_000);

  it("a project that reformats later (a Prettier config added after `add`): diff shows no edit, and update merges only real edits", async () => {
    const dir = await projectWith("prettier", {});
    await runAdd({ blocks: ["logger"], cwd: dir, yes: true, install: false });
    const file = path.join(dir, "src/blocks/logger/context.ts");
    expect(readFileSync(file, "utf8")).toContain('from "');
    writeFileSync(path.join(dir, ".prettierrc"), JSON.stringify({ singleQuote: true }));
    await execa(bin("prettier"), ["--write", "src/blocks"], { cwd: dir });
    writeFileSync(file, `// ours\n${readFileSync(file, "utf8")}`);
    expect((await runDiff({ cwd: dir })).changes.map((change) => `${change.file} ${change.status}`)).toEqual([
      "src/blocks/logger/context.ts edited",
    ]);
    const update = await runUpdate({ cwd: dir, yes: true });
    expect(update.ok).toBe(true);
    expect(readFileSync(file, "utf8")).toMatch(/^\/\/ ours\n[\s\S]*from '/);
  }, 120_000);

  it("a formatter installed after `add` (NestJS's first install) whose script formats only .ts: diff counts the READMEs Prettier would reformat as unchanged", async () => {
    const dir = await sampleProject("hono-bundler", []);
    await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false });
    const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as {
      devDependencies: Record<string, string>;
    };
    writeFileSync(
      path.join(dir, "package.json"),
      JSON.stringify({ ...manifest, devDependencies: { ...manifest.devDependencies, prettier: "*" } }, null, 2),
    );
    writeFileSync(path.join(dir, ".prettierrc"), JSON.stringify({ singleQuote: true, trailingComma: "all" }));
    await execa(bin("prettier"), ["--write", "src/**/*.ts"], { cwd: dir });
    expect((await runDiff({ cwd: dir })).changes).toEqual([]);
  }, 120_000);

  it("a folder the project's .prettierignore lists is written as the registry has it, as `prettier --write .` would leave it", async () => {
    const dir = await projectWith("prettier", {
      ".prettierrc": JSON.stringify({ singleQuote: true }),
      ".prettierignore": "src/blocks\n",
    });
    await runAdd({ blocks: ["logger"], cwd: dir, yes: true, install: false });
    const context = readFileSync(path.join(dir, "src/blocks/logger/context.ts"), "utf8");
    expect(context).toBe(readFileSync(path.join(REPO, "registry/logger/context.ts"), "utf8"));
  }, 120_000);
});
