// What the CLI says matches what it does. Found: `blocks --help` listed "(idempotency, logger)" of four
// blocks; `add` said the wiring's test skips without DATABASE_URL while on pg it runs on PGlite; the
// vendored files named internal issue numbers their new owners cannot look up.
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { execa } from "execa";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runAdd } from "../../cli/commands/add.js";
import { configureOutput } from "../../cli/utils/logger.js";
import { sampleProject } from "./wiring-projects.js";

const REPO = path.resolve(import.meta.dirname, "../..");

/** What `add` prints, through the logger as a user sees it. */
async function addOutput(dir: string): Promise<string> {
  configureOutput({ silent: false });
  const out: string[] = [];
  vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (out.push(String(chunk)), true));
  vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false });
  vi.restoreAllMocks();
  return out.join("");
}

describe("CLI messages", () => {
  afterEach(() => {
    vi.restoreAllMocks();
    configureOutput({ silent: true });
  });

  it("--help names every block of the registry", async () => {
    const help = await execa(path.join(REPO, "node_modules/.bin/tsx"), [path.join(REPO, "cli/index.ts"), "--help"]);
    const blocks = readdirSync(path.join(REPO, "registry"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    for (const block of blocks) expect(help.stdout.replace(/\s+/g, " ")).toContain(block);
  });

  it("add's Next: says the wiring's test runs on PGlite with pg, and names DATABASE_URL where it needs one", async () => {
    const pg = await addOutput(await sampleProject("hono-bundler", []));
    expect(pg).toContain("the wiring's test runs on an embedded PostgreSQL, PGlite");
    expect(pg).not.toMatch(/skips itself until/);
    const postgresJs = await addOutput(await sampleProject("hono-bundler", ["postgres"]));
    expect(postgresJs).toContain("the wiring's test skips itself until DATABASE_URL is set");
  }, 60_000);

  it("add's Next: applies the migration with the project's own tool when it went into that tool's journal", async () => {
    const dir = await sampleProject("hono-bundler", ["drizzle-orm", "drizzle-kit"]);
    const config = JSON.parse(readFileSync(path.join(dir, "blocks.json"), "utf8")) as { database: { layout: string } };
    expect(config.database.layout).toBe("drizzle");
    const drizzle = await addOutput(dir);
    expect(drizzle).toMatch(/create the table: .*drizzle-kit migrate.* \(it is in its journal: drizzle\/\d{4}_/);
    const sql = await addOutput(await sampleProject("hono-bundler", []));
    expect(sql).not.toContain("drizzle-kit");
    expect(sql).toMatch(/create the table: run .*\.sql, or .*blocks migrate --apply/);
  }, 60_000);

  it("add's Next: tells a Nest + TypeORM app to build the handler on TypeOrmModule's DataSource, in a module with the lifecycle hooks", async () => {
    const nest = await addOutput(await sampleProject("nestjs-commonjs", []));
    expect(nest).toContain(
      "on NestJS, a module provides the handler on your app's client (TypeOrmModule's DataSource, injected: createIdempotency({ db: dataSource })), calls startMaintenance() on bootstrap and close() on shutdown",
    );
    const hono = await addOutput(await sampleProject("hono-bundler", []));
    expect(hono).not.toContain("NestJS");
  }, 60_000);

  it("add's Next: names the project's Vitest include that leaves the block's tests out (nest new writes '**/*.spec.ts')", async () => {
    const dir = await sampleProject("hono-bundler", []);
    writeFileSync(
      path.join(dir, "vitest.config.ts"),
      "export default { resolve: { tsconfigPaths: true }, test: { globals: true, root: './', include: ['**/*.spec.ts'] } };\n",
    );
    expect(await addOutput(dir)).toContain(
      'vitest.config.ts runs only **/*.spec.ts; add "src/blocks/**/*.test.ts" to its test.include, or the command below finds no test file',
    );
    const matching = await sampleProject("hono-bundler", []);
    writeFileSync(
      path.join(matching, "vitest.config.ts"),
      "export default { test: { include: ['**/*.{test,spec}.?(c|m)[jt]s?(x)'], coverage: { include: ['src/**'] } } };\n",
    );
    expect(await addOutput(matching)).not.toContain("test.include");
  }, 60_000);

  it("no vendored file names an internal issue", () => {
    const files = readdirSync(path.join(REPO, "registry"), { recursive: true, encoding: "utf8" }).filter((file) =>
      /\.(ts|md|json)$/.test(file),
    );
    const internal = files.filter((file) =>
      /\bissue #?\d+|\bpoints? \d+(?: and \d+)?\)/i.test(readFileSync(path.join(REPO, "registry", file), "utf8")),
    );
    expect(internal).toEqual([]);
  });
});
