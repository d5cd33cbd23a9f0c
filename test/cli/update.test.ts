// `blocks update`: a three-way merge per file between the recorded base, the user's copy and the registry.
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { execa } from "execa";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runAdd } from "../../cli/commands/add.js";
import { runDiff } from "../../cli/commands/diff.js";
import { runDoctor } from "../../cli/commands/doctor.js";
import { runInit } from "../../cli/commands/init.js";
import { runUpdate } from "../../cli/commands/update.js";
import { merge3 } from "../../cli/update/merge3.js";
import { contentHash } from "../../cli/utils/files.js";
import { configureOutput } from "../../cli/utils/logger.js";
import { rejection, tempProject } from "./helpers.js";

const REPO = path.resolve(import.meta.dirname, "../..");
const registries: string[] = [];
afterEach(() => {
  for (const dir of registries.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the registry (and the templates it names) that a test can move "upstream". */
function upstream(): { root: string; edit(file: string, change: (text: string) => string): void } {
  const dir = mkdtempSync(path.join(tmpdir(), "blocks-upstream-"));
  registries.push(dir);
  cpSync(path.join(REPO, "registry"), path.join(dir, "registry"), { recursive: true });
  cpSync(path.join(REPO, "templates"), path.join(dir, "templates"), { recursive: true });
  const root = path.join(dir, "registry");
  return {
    root,
    edit: (file, change) => writeFileSync(path.join(root, file), change(readFileSync(path.join(root, file), "utf8"))),
  };
}

async function withLogger() {
  const registry = upstream();
  const dir = tempProject("hono-bundler");
  await runInit({ cwd: dir, yes: true });
  await runAdd({ blocks: ["logger"], cwd: dir, yes: true, install: false, registry: registry.root });
  const file = (name: string) => path.join(dir, "src/blocks/logger", name);
  const read = (name: string) => readFileSync(file(name), "utf8");
  const write = (name: string, change: (text: string) => string) => writeFileSync(file(name), change(read(name)));
  const update = (options: Parameters<typeof runUpdate>[0] = {}) =>
    runUpdate({ cwd: dir, yes: true, registry: registry.root, ...options });
  return { dir, registry, read, write, file, update };
}

describe("merge3", () => {
  it("keeps both sides' changes to different places", () => {
    expect(merge3("a\nb\nc\nd\ne\n", "A\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n")).toEqual({
      text: "A\nb\nc\nd\nE\n",
      conflicts: 0,
    });
  });

  it("marks different changes to the same line as a conflict, yours first", () => {
    expect(merge3("a\nb\nc\n", "a\nX\nc\n", "a\nY\nc\n")).toEqual({
      text: "a\n<<<<<<< yours\nX\n=======\nY\n>>>>>>> registry\nc\n",
      conflicts: 1,
    });
  });

  it("takes an identical change once, a deletion on one side, and ends markers on their own line", () => {
    expect(merge3("a\nb\nc\n", "a\nB\nc\n", "a\nB\nc\n").text).toBe("a\nB\nc\n");
    expect(merge3("a\nb\nc\n", "a\nc\n", "a\nb\nc\n").text).toBe("a\nc\n");
    expect(merge3("a\nb", "a\nbx", "a\nby").text).toBe("a\n<<<<<<< yours\nbx\n=======\nby\n>>>>>>> registry\n");
  });
});

describe("blocks update", () => {
  it("keeps the user's edit and brings in the registry's change to another place of the same file", async () => {
    const project = await withLogger();
    // The user's edit is real (a replace of a line the file no longer has would leave it untouched, and the test would prove nothing).
    expect(project.read("request-id.ts")).toContain("// A request's id:");
    project.write("request-id.ts", (text) => text.replace("// A request's id:", "// Our request ids (edited by us):"));
    project.registry.edit("logger/request-id.ts", (text) => `${text}\nexport const REQUEST_ID_MAX = 128;\n`);
    const result = await project.update();
    expect(result.files.find((file) => file.target.endsWith("request-id.ts"))?.status).toBe("merged");
    expect(result.ok).toBe(true);
    const merged = project.read("request-id.ts");
    expect(merged).toContain("// Our request ids (edited by us):");
    expect(merged).toContain("export const REQUEST_ID_MAX = 128;");
  });

  it("writes conflict markers for the same line changed on both sides, lists the file and reports not ok (exit 1)", async () => {
    const project = await withLogger();
    project.write("request-id.ts", (text) => text.replace('"x-request-id"', '"x-correlation-id"'));
    project.registry.edit("logger/request-id.ts", (text) => text.replace('"x-request-id"', '"x-trace-id"'));
    const result = await project.update();
    expect(result.ok).toBe(false);
    expect(result.conflicts).toEqual(["src/blocks/logger/request-id.ts"]);
    expect(project.read("request-id.ts")).toContain(
      '<<<<<<< yours\nexport const REQUEST_ID_HEADER = "x-correlation-id";\n=======\nexport const REQUEST_ID_HEADER = "x-trace-id";\n>>>>>>> registry\n',
    );
  });

  it("--dry-run reports the same plan and writes nothing, lock included", async () => {
    const project = await withLogger();
    project.registry.edit("logger/context.ts", (text) => `${text}// upstream\n`);
    const lockBefore = readFileSync(path.join(project.dir, "blocks.lock.json"), "utf8");
    const before = project.read("context.ts");
    const result = await project.update({ dryRun: true });
    expect(result.files.find((file) => file.target.endsWith("/context.ts"))?.status).toBe("updated");
    expect(project.read("context.ts")).toBe(before);
    expect(readFileSync(path.join(project.dir, "blocks.lock.json"), "utf8")).toBe(lockBefore);
  });

  it("replaces an untouched file, keeps a deleted one deleted, adds a new registry file, reports a dropped one without deleting it", async () => {
    const project = await withLogger();
    project.registry.edit("logger/context.ts", (text) => `${text}// upstream\n`);
    rmSync(project.file("logger.ts"));
    project.registry.edit("logger/logger.ts", (text) => `${text}// upstream too\n`);
    writeFileSync(path.join(project.registry.root, "logger/redact.ts"), "export const REDACTED = '[redacted]';\n");
    rmSync(path.join(project.registry.root, "logger/request-id.test.ts"));
    const result = await project.update();
    const status = (name: string) => result.files.find((file) => file.target === `src/blocks/logger/${name}`)?.status;
    expect([status("context.ts"), status("logger.ts"), status("redact.ts"), status("request-id.test.ts")]).toEqual([
      "updated",
      "deleted",
      "added",
      "dropped",
    ]);
    expect(project.read("context.ts")).toMatch(/\/\/ upstream\n$/);
    expect(existsSync(project.file("logger.ts"))).toBe(false);
    expect(project.read("redact.ts")).toContain("REDACTED");
    expect(existsSync(project.file("request-id.test.ts"))).toBe(true);
  });

  it("a logger added when its framework code sat in middleware/: update adds adapters/hono.ts and leaves middleware/hono.ts in place, untracked", async () => {
    const registry = upstream();
    const logger = path.join(registry.root, "logger");
    renameSync(path.join(logger, "adapters"), path.join(logger, "middleware"));
    const dir = tempProject("hono-bundler");
    await runInit({ cwd: dir, yes: true });
    await runAdd({ blocks: ["logger"], cwd: dir, yes: true, install: false, registry: registry.root });
    expect(existsSync(path.join(dir, "src/blocks/logger/middleware/hono.ts"))).toBe(true);
    renameSync(path.join(logger, "middleware"), path.join(logger, "adapters"));
    const result = await runUpdate({ cwd: dir, yes: true, registry: registry.root });
    const status = (name: string) => result.files.find((file) => file.target === `src/blocks/logger/${name}`)?.status;
    expect([status("middleware/hono.ts"), status("adapters/hono.ts")]).toEqual(["dropped", "added"]);
    expect(existsSync(path.join(dir, "src/blocks/logger/middleware/hono.ts"))).toBe(true);
    expect(readFileSync(path.join(dir, "src/blocks/logger/adapters/hono.ts"), "utf8")).toContain(
      "export function requestId",
    );
    const lock = readFileSync(path.join(dir, "blocks.lock.json"), "utf8");
    expect(lock).not.toContain("middleware/hono.ts");
  });

  it("records the registry version as the new base, so the next update merges from it", async () => {
    const project = await withLogger();
    project.write("context.ts", (text) => `// ours\n${text}`);
    project.registry.edit("logger/context.ts", (text) => `${text}// upstream 1\n`);
    await project.update();
    const lock = JSON.parse(readFileSync(path.join(project.dir, "blocks.lock.json"), "utf8"));
    const registryVersion = readFileSync(path.join(project.registry.root, "logger/context.ts"), "utf8");
    expect(lock.blocks.logger.files["src/blocks/logger/context.ts"]).toBe(contentHash(registryVersion));
    project.registry.edit("logger/context.ts", (text) => `${text}// upstream 2\n`);
    const second = await project.update();
    expect(second.files.find((file) => file.target.endsWith("/context.ts"))?.status).toBe("merged");
    expect(project.read("context.ts")).toMatch(/^\/\/ ours\n[\s\S]*\/\/ upstream 1\n\/\/ upstream 2\n$/);
  });

  it("lists (does not install) a package the registry's version needs and the project does not declare", async () => {
    const project = await withLogger();
    const declaration = path.join(project.registry.root, "logger/block.json");
    const block = JSON.parse(readFileSync(declaration, "utf8"));
    writeFileSync(
      declaration,
      JSON.stringify({ ...block, dependencies: { ...block.dependencies, "pino-pretty": "^13.0.0" } }),
    );
    const result = await project.update();
    expect(result.install.join(" ")).toContain("pino-pretty@^13.0.0");
  });

  it("without a terminal and without --yes, fails naming the flag and writes nothing", async () => {
    const project = await withLogger();
    project.registry.edit("logger/context.ts", (text) => `${text}// upstream\n`);
    const before = project.read("context.ts");
    const error = await rejection(project.update({ yes: false }));
    expect(error.code).toBe("DECISION_REQUIRED");
    expect(error.suggestion).toContain("--yes");
    expect(project.read("context.ts")).toBe(before);
  });

  it("diff reports changes (the command exits 1 on them) and none after the update", async () => {
    const project = await withLogger();
    project.registry.edit("logger/context.ts", (text) => `${text}// upstream\n`);
    expect(
      (await runDiff({ cwd: project.dir, registry: project.registry.root })).changes.map((change) => change.status),
    ).toEqual(["outdated"]);
    await project.update();
    expect((await runDiff({ cwd: project.dir, registry: project.registry.root })).changes).toEqual([]);
  });

  it("conflicts that vanished: a second update is not 'Already up to date' while its markers remain, and doctor points at them", async () => {
    const project = await withLogger();
    project.write("request-id.ts", (text) => text.replace('"x-request-id"', '"x-correlation-id"'));
    project.registry.edit("logger/request-id.ts", (text) => text.replace('"x-request-id"', '"x-trace-id"'));
    await project.update();
    const again = await project.update();
    expect(again.ok).toBe(false);
    expect(again.conflicts).toEqual(["src/blocks/logger/request-id.ts"]);
    expect(again.files.find((file) => file.target.endsWith("/request-id.ts"))?.status).toBe("unresolved");
    const markerLine = project.read("request-id.ts").split("\n").indexOf("<<<<<<< yours") + 1;
    const doctor = await runDoctor({ cwd: project.dir, registry: project.registry.root, databaseUrl: undefined });
    expect(doctor.ok).toBe(false);
    expect(
      doctor.findings.filter((item) => item.rule === "unresolved-conflict").map((item) => `${item.file}:${item.line}`),
    ).toEqual([`src/blocks/logger/request-id.ts:${markerLine}`]);

    project.write("request-id.ts", (text) =>
      text.replace(/<<<<<<< yours\n(.*\n)=======\n.*\n>>>>>>> registry\n/, "$1"),
    );
    const resolved = await project.update();
    expect(resolved.ok).toBe(true);
    expect(
      (await runDoctor({ cwd: project.dir, registry: project.registry.root, databaseUrl: undefined })).findings.filter(
        (item) => item.rule === "unresolved-conflict",
      ),
    ).toEqual([]);
  });

  it("explains every base it drops: the old base of each file whose base moved, by name and why", async () => {
    const project = await withLogger();
    project.registry.edit("logger/context.ts", (text) => `${text}// upstream\n`);
    const result = await project.update();
    expect(result.droppedBases).toEqual([
      {
        hash: expect.stringMatching(/^sha256-/),
        file: "src/blocks/logger/context.ts",
        reason: expect.stringContaining("its base is now the registry's version"),
      },
    ]);
  });

  it("setup files' bases: add keeps none for the wiring module (nothing merges into it), so update has none of them to delete", async () => {
    const dir = tempProject("hono-bundler");
    await runInit({ cwd: dir, yes: true });
    await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false });
    const lock = JSON.parse(readFileSync(path.join(dir, "blocks.lock.json"), "utf8")) as {
      blocks: Record<string, { files: Record<string, string> }>;
    };
    const named = new Set(
      Object.values(lock.blocks).flatMap((block) =>
        Object.values(block.files).map((hash) => hash.replace(/^sha256-/, "")),
      ),
    );
    expect(readdirSync(path.join(dir, ".blocks/bases")).sort()).toEqual([...named].sort());
    const result = await runUpdate({ cwd: dir, yes: true });
    expect(result.droppedBases).toEqual([]);
  });
});

// Found: an update that changed a store's SQL said nothing, so the new code met a database without its column.
describe("blocks update: a changed store schema", () => {
  afterEach(() => vi.restoreAllMocks());

  async function withRateLimiter() {
    const registry = upstream();
    const dir = tempProject("hono-bundler");
    await runInit({ cwd: dir, yes: true });
    await runAdd({
      blocks: ["rate-limiter"],
      cwd: dir,
      yes: true,
      install: false,
      registry: registry.root,
      table: "api_limits",
    });
    const output: string[] = [];
    configureOutput({ silent: false });
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => (output.push(String(chunk)), true));
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (output.push(String(chunk)), true));
    const schema = (change: (text: string) => string) =>
      registry.edit("rate-limiter/stores/postgres-schema.ts", change);
    return { dir, registry, output, schema, update: () => runUpdate({ cwd: dir, yes: true, registry: registry.root }) };
  }

  it("names what changed in the project's table and tells the user to run blocks migrate, in the text and in --json's result", async () => {
    const project = await withRateLimiter();
    project.schema((text) =>
      text
        .replace(
          "${bare}_tat_us_idx ON ${table} (tat_us)`,",
          "${bare}_tat_us_idx ON ${table} (tat_us, key)`,\n    `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS hits BIGINT`,",
        )
        .replace(
          "DROP INDEX IF EXISTS ${schema}${bare}_tat_ms_idx;",
          "DROP INDEX IF EXISTS ${schema}${bare}_tat_ms_idx; -- renamed",
        ),
    );
    const result = await project.update();
    expect(result.schemaChanges).toEqual([
      {
        block: "rate-limiter",
        table: "api_limits",
        added: ["ALTER TABLE api_limits ADD COLUMN IF NOT EXISTS hits BIGINT"],
        changed: [
          expect.stringMatching(/^DO \$\$ BEGIN IF EXISTS .*…$/),
          "CREATE INDEX IF NOT EXISTS api_limits_tat_us_idx ON api_limits (tat_us, key)",
        ],
        removed: [],
      },
    ]);
    const text = project.output.join("");
    expect(text).toContain("rate-limiter: this version changes the schema of api_limits. Run `blocks migrate`");
    expect(text).toContain("  + ALTER TABLE api_limits ADD COLUMN IF NOT EXISTS hits BIGINT\n");
    expect(text).toContain("  ~ CREATE INDEX IF NOT EXISTS api_limits_tat_us_idx ON api_limits (tat_us, key)\n");
    // What the message sends the user to: migrate writes the column in a migration of its own. In a process of its own, as
    // users run it: this one's import cache still holds the schema module as `add` imported it.
    const migrate = await execa(
      "node",
      [
        path.join(REPO, "node_modules/tsx/dist/cli.mjs"),
        path.join(REPO, "cli/index.ts"),
        "migrate",
        "--cwd",
        project.dir,
        "--registry",
        project.registry.root,
      ],
      { reject: false },
    );
    expect(migrate.exitCode, migrate.stderr).toBe(0);
    const migrations = readdirSync(path.join(project.dir, "migrations"));
    const updateMigration = migrations.find((name) => name.includes("update_api_limits"));
    expect(updateMigration, migrations.join(", ")).toBeDefined();
    expect(readFileSync(path.join(project.dir, "migrations", updateMigration as string), "utf8")).toContain(
      "ALTER TABLE api_limits ADD COLUMN IF NOT EXISTS hits BIGINT;",
    );
  });

  it("says nothing when the schema module changed but not its SQL", async () => {
    const project = await withRateLimiter();
    project.schema((text) => text.replace("// Cleanup deletes keys", "// The cleanup deletes keys"));
    expect((await project.update()).schemaChanges).toEqual([]);
    expect(project.output.join("")).not.toContain("changes the schema");
  });
});
