// Detection of the alias (incl. `extends`), module style, package manager and migrations layout.
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import prompts from "prompts";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runAdd } from "../../cli/commands/add.js";
import { runInit } from "../../cli/commands/init.js";
import { chooseFeatures } from "../../cli/add/choose-features.js";
import { loadRegistry } from "../../cli/registry/manifest.js";
import { resolveBlocks } from "../../cli/registry/resolve.js";
import { decide } from "../../cli/utils/prompt.js";
import { detectMigrations } from "../../cli/migrate/detect-layout.js";
import { aliasFor, aliasRoots } from "../../cli/project/detect-alias.js";
import { detectPackageManager, execCommand, installCommand } from "../../cli/project/package-manager.js";
import { workspacePackages } from "../../cli/project/workspaces.js";
import { loadTsconfig } from "../../cli/project/tsconfig.js";
import { tempProject } from "./helpers.js";
import { typeCheck } from "./wiring-projects.js";

describe("alias detection", () => {
  it.each([
    [{ "@/*": ["./src/*"] }, "@/blocks"],
    [{ "~/*": ["./src/*"] }, "~/blocks"],
    [{ "#app/*": ["./src/*"], "#blocks/*": ["./src/blocks/*"] }, "#blocks"],
    [{ "@lib/*": ["./lib/*"] }, undefined],
    [{ "@/exact": ["./src/exact.ts"] }, undefined],
  ])("%j -> %s", (paths, alias) => {
    expect(aliasFor(aliasRoots(paths, "/app"), "/app/src/blocks")).toBe(alias);
  });

  it("follows `extends` to an inherited paths entry, relative to the file that declares it", async () => {
    const tsconfig = await loadTsconfig(tempProject("express-nodenext"));
    expect(tsconfig?.moduleStyle).toBe("nodenext");
    expect(tsconfig?.paths).toEqual({ "@/*": ["./src/*"] });
  });

  it.each([
    ["fastify-commonjs", "extensionless", null],
    ["hono-bundler", "extensionless", "~/blocks"],
    ["express-nodenext", "nodenext", "@/blocks"],
  ])("init on %s: %s imports, alias %s", async (fixture, moduleStyle, alias) => {
    const { config } = await runInit({ cwd: tempProject(fixture), yes: true });
    expect(config).toMatchObject({ dir: "src/blocks", moduleStyle, alias });
  });

  /** fastify-commonjs (no alias) before its first source file: no src/ yet, and `compilerOptions` edited. */
  function withoutSrc(compilerOptions: Record<string, unknown>, include?: string[]) {
    const dir = tempProject("fastify-commonjs");
    rmSync(path.join(dir, "src"), { recursive: true });
    const file = path.join(dir, "tsconfig.json");
    const tsconfig = JSON.parse(readFileSync(file, "utf8"));
    Object.assign(tsconfig.compilerOptions, compilerOptions);
    if (include) tsconfig.include = include;
    writeFileSync(file, JSON.stringify(tsconfig, null, 2));
    return dir;
  }

  it.each([
    [{ rootDir: "src" }, undefined, "src/blocks"],
    [{ rootDir: "./app/" }, ["app"], "app/blocks"],
    [{}, ["server/**/*.ts"], "server/blocks"],
    [{}, ["**/*.ts"], "blocks"],
  ])("init before src/ exists, tsconfig %j include %j: blocks go to %s", async (compilerOptions, include, expected) => {
    const { config } = await runInit({ cwd: withoutSrc(compilerOptions, include), yes: true });
    expect(config.dir).toBe(expected);
  });

  it("with rootDir src and no src/ yet, what add writes lies inside rootDir: tsc has no TS6059", async () => {
    const dir = withoutSrc({ rootDir: "src" });
    symlinkSync(path.resolve(import.meta.dirname, "../../node_modules"), path.join(dir, "node_modules"), "dir");
    await runInit({ cwd: dir, yes: true });
    const { files } = await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false });
    // The app will import the wiring: every file add wrote is compiled with rootDir src.
    const written = files.map((file) => file.target).filter((target) => target.endsWith(".ts"));
    expect(typeCheck(dir, written).filter((line) => line.includes("TS6059"))).toEqual([]);
    expect(written).toContain("src/idempotency-setup.ts");
  }, 60_000);

  it("with --yes and no alias, init leaves tsconfig.json alone and uses relative imports", async () => {
    const dir = tempProject("fastify-commonjs");
    const before = (await loadTsconfig(dir))?.paths;
    await runInit({ cwd: dir, yes: true });
    expect((await loadTsconfig(dir))?.paths).toEqual(before);
  });
});

describe("init on a terminal", () => {
  afterEach(() => vi.unstubAllEnvs());

  it("offers a paths alias when tsconfig has none, and writes it when accepted", async () => {
    const dir = tempProject("fastify-commonjs");
    vi.stubEnv("CI", "");
    const streams = [process.stdin, process.stdout] as Array<{ isTTY?: boolean | undefined }>;
    const before = streams.map((stream) => stream.isTTY);
    streams.forEach((stream) => (stream.isTTY = true));
    prompts.inject([true, true]);
    const { config } = await runInit({ cwd: dir }).finally(() =>
      streams.forEach((stream, i) => (stream.isTTY = before[i])),
    );
    expect(config.alias).toBe("@/blocks");
    expect((await loadTsconfig(dir))?.paths).toEqual({ "@/*": ["./src/*"] });
  });

  it("writes the accepted alias only with blocks.json: declining the settings leaves tsconfig.json as it was", async () => {
    const dir = tempProject("fastify-commonjs");
    const tsconfig = readFileSync(path.join(dir, "tsconfig.json"), "utf8");
    vi.stubEnv("CI", "");
    const streams = [process.stdin, process.stdout] as Array<{ isTTY?: boolean | undefined }>;
    const before = streams.map((stream) => stream.isTTY);
    streams.forEach((stream) => (stream.isTTY = true));
    prompts.inject([true, false]);
    const refused = await runInit({ cwd: dir })
      .catch((err: Error & { code?: string }) => err)
      .finally(() => streams.forEach((stream, i) => (stream.isTTY = before[i])));
    expect(refused).toMatchObject({ code: "CANCELLED" });
    expect(readFileSync(path.join(dir, "tsconfig.json"), "utf8")).toBe(tsconfig);
    expect(existsSync(path.join(dir, "blocks.json"))).toBe(false);
  });
});

describe("prompts", () => {
  /** Runs `work` as on a terminal, with `answers` injected; an `undefined` answer is the prompt's default (Enter). */
  async function onTerminal<T>(answers: unknown[], work: () => Promise<T>): Promise<T> {
    vi.stubEnv("CI", "");
    const streams = [process.stdin, process.stdout] as Array<{ isTTY?: boolean | undefined }>;
    const before = streams.map((stream) => stream.isTTY);
    streams.forEach((stream) => (stream.isTTY = true));
    prompts.inject(answers);
    return work().finally(() => streams.forEach((stream, i) => (stream.isTTY = before[i])));
  }

  it("Enter on add's feature prompts takes what --yes takes: the Redis cache and metrics only when the project has their package", async () => {
    const registry = await loadRegistry();
    const blocks = resolveBlocks(registry, ["idempotency"]);
    const bare = await onTerminal([undefined, undefined], () => chooseFeatures(blocks, new Set(), { flags: {} }));
    const yes = await chooseFeatures(blocks, new Set(), { flags: {}, yes: true });
    expect([...bare].sort()).toEqual([...yes].sort());
    expect(bare.has("cache") || bare.has("metrics")).toBe(false);
    const declared = new Set(["ioredis", "prom-client"]);
    const detected = await onTerminal([undefined, undefined], () => chooseFeatures(blocks, declared, { flags: {} }));
    expect(detected.has("cache") && detected.has("metrics")).toBe(true);
  });

  it("Enter on a question whose --yes answer is no (replace my edited files?) answers no", async () => {
    const answer = await onTerminal([undefined], () =>
      decide({ message: "Replace them?", flag: "--overwrite", yesAnswer: false }, undefined),
    );
    expect(answer).toBe(false);
  });
});

describe("package manager", () => {
  it.each([
    ["pnpm-lock.yaml", "pnpm"],
    ["yarn.lock", "yarn"],
    ["bun.lock", "bun"],
    ["package-lock.json", "npm"],
  ])("%s -> %s", (lockfile, manager) => {
    const dir = tempProject("hono-bundler");
    writeFileSync(path.join(dir, lockfile), "");
    expect(detectPackageManager(dir, {})).toBe(manager);
  });

  it("prefers package.json's packageManager field", () => {
    expect(detectPackageManager(tempProject("hono-bundler"), { packageManager: "pnpm@9.1.0" })).toBe("pnpm");
  });

  it("builds each manager's own dev-install command", () => {
    expect(
      ["npm", "pnpm", "yarn", "bun"].map((pm) => installCommand(pm as "npm", ["vitest@^4"], true).join(" ")),
    ).toEqual([
      "npm install --save-dev -- vitest@^4",
      "pnpm add -D -- vitest@^4",
      "yarn add -D -- vitest@^4",
      "bun add --dev -- vitest@^4",
    ]);
  });
});

describe("migrations layout", () => {
  const none = new Set<string>();
  it("finds Prisma, drizzle-kit (with its out folder), node-pg-migrate (with -m) and plain SQL folders", () => {
    const dir = tempProject("hono-bundler");
    expect(detectMigrations(dir, none)).toEqual({ layout: "sql", migrations: "migrations", dialect: "postgresql" });
    mkdirSync(path.join(dir, "db/migrations"), { recursive: true });
    expect(detectMigrations(dir, none)).toEqual({ layout: "sql", migrations: "db/migrations", dialect: "postgresql" });
    expect(detectMigrations(dir, new Set(["node-pg-migrate"]), { migrate: "node-pg-migrate -m db/pg up" })).toEqual({
      layout: "node-pg-migrate",
      migrations: "db/pg",
      dialect: "postgresql",
    });
    writeFileSync(
      path.join(dir, "drizzle.config.ts"),
      `export default { out: "./drizzle/out", schema: "./src/schema.ts" };`,
    );
    expect(detectMigrations(dir, none)).toEqual({
      layout: "drizzle",
      migrations: "drizzle/out",
      dialect: "postgresql",
    });
    mkdirSync(path.join(dir, "prisma"));
    writeFileSync(path.join(dir, "prisma/schema.prisma"), "");
    expect(detectMigrations(dir, none)).toEqual({
      layout: "prisma",
      migrations: "prisma/migrations",
      dialect: "postgresql",
    });
  });

  it("the database: Prisma's datasource provider, drizzle-kit's dialect, else the one database driver declared, else PostgreSQL", () => {
    const dir = tempProject("hono-bundler");
    expect(detectMigrations(dir, new Set(["mysql2"])).dialect).toBe("mysql");
    expect(detectMigrations(dir, new Set(["@libsql/client"])).dialect).toBe("sqlite");
    expect(detectMigrations(dir, new Set(["pg", "mysql2"])).dialect).toBe("postgresql");
    writeFileSync(path.join(dir, "drizzle.config.ts"), `export default { dialect: "turso", out: "./drizzle" };`);
    expect(detectMigrations(dir, new Set(["pg"])).dialect).toBe("sqlite");
    mkdirSync(path.join(dir, "prisma"));
    const schema =
      'generator client {\n  provider = "prisma-client-js"\n}\n\ndatasource db {\n  provider = "mysql"\n}\n';
    writeFileSync(path.join(dir, "prisma/schema.prisma"), schema);
    expect(detectMigrations(dir, none)).toEqual({
      layout: "prisma",
      migrations: "prisma/migrations",
      dialect: "mysql",
    });
  });
});

describe("workspaces", () => {
  it("lists npm/yarn and pnpm workspace packages", () => {
    const dir = tempProject("npm-workspaces");
    expect(workspacePackages(dir, { workspaces: ["apps/*", "packages/*"] } as never)).toEqual([
      "apps/api",
      "packages/shared",
    ]);
    expect(workspacePackages(dir, { workspaces: { packages: ["apps/*"] } } as never)).toEqual(["apps/api"]);
    writeFileSync(path.join(dir, "pnpm-workspace.yaml"), "packages:\n  - 'packages/*'\n  - \"apps/api\" # the api\n");
    expect(workspacePackages(dir, {})).toEqual(["apps/api", "packages/shared"]);
  });

  it("init at a workspaces root without a terminal fails naming --cwd and writes nothing", async () => {
    const dir = tempProject("npm-workspaces");
    const spy = vi.spyOn(process, "cwd").mockReturnValue(dir);
    try {
      const rootError = (await runInit({ yes: true }).catch((err: unknown) => err)) as {
        code?: string;
        suggestion?: string;
      };
      expect(rootError.code).toBe("WORKSPACE_ROOT");
      expect(rootError.suggestion).toContain("--cwd apps/api");
    } finally {
      spy.mockRestore();
    }
  });

  it("the Next hints run bins with the project's package manager", () => {
    expect(["npm", "pnpm", "yarn", "bun"].map((manager) => execCommand(manager as never))).toEqual([
      "npx",
      "pnpm dlx",
      "yarn dlx",
      "bunx",
    ]);
  });
});
