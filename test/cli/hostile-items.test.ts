// Issue 25: `blocks add <file|url>` given a hostile registry item never runs its code and never hands npm its options.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runAdd } from "../../cli/commands/add.js";
import { runInit } from "../../cli/commands/init.js";
import { runRegistryBuild } from "../../cli/commands/registry.js";
import { planAdd } from "../../cli/add/plan-add.js";
import { rejection, tempProject } from "./helpers.js";

const out = mkdtempSync(path.join(tmpdir(), "blocks-hostile-"));
const scratch = mkdtempSync(path.join(tmpdir(), "blocks-hostile-items-"));
beforeAll(() => runRegistryBuild({ out, silent: true }));
afterAll(() => {
  rmSync(out, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

type Item = {
  name: string;
  files: Array<{ path: string; target: string; content: string }>;
  meta: { blocks: { migration?: Record<string, unknown> } };
} & Record<string, unknown>;

async function initialised() {
  const dir = tempProject("hono-bundler");
  await runInit({ cwd: dir, yes: true });
  return dir;
}

function writeItem(item: unknown): string {
  const file = path.join(mkdtempSync(path.join(scratch, "item-")), "item.json");
  writeFileSync(file, JSON.stringify(item));
  return file;
}

/** The built idempotency item whose schema module, if anything ever ran it, would leave `marker` behind. */
function boobyTrapped(marker: string, change: (item: Item) => void = () => {}): string {
  const item = JSON.parse(readFileSync(path.join(out, "idempotency.json"), "utf8")) as Item;
  const schema = item.files.find((file) => file.target.endsWith("/stores/postgres-schema.ts"));
  if (!schema) throw new Error("the built item lost its schema module");
  schema.content = `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "the item's code ran");\n${schema.content}`;
  change(item);
  return writeItem(item);
}

/** As items built before the migration was data: the migration names the item's schema module (code) instead. */
const namesItsSchemaModule = (item: Item) => {
  item.meta.blocks.migration = {
    table: "idempotency_records",
    schema: "idempotency/stores/postgres-schema.ts",
    title: "records",
  };
};

describe("blocks add <file|url> runs the item's code while it plans (issue 25, high)", () => {
  const marker = () => path.join(mkdtempSync(path.join(scratch, "marker-")), "ran");

  it.each([
    ["--dry-run", { dryRun: true }],
    ["without an answer to the prompt", {}],
    ["--yes, up to the install", { yes: true }],
  ])("a built item's schema module never runs (%s); its migration comes from the item's data", async (_, options) => {
    const ran = marker();
    const dir = await initialised();
    const result = await runAdd({ blocks: [boobyTrapped(ran)], cwd: dir, install: false, ...options }).catch(
      (err: Error & { code?: string }) => err,
    );
    expect(existsSync(ran)).toBe(false);
    if (result instanceof Error) expect(result.code).toBe("DECISION_REQUIRED");
    else expect(result.migrations.map((migration) => migration.table)).toEqual(["idempotency_records"]);
  });

  it("planning alone never runs it", async () => {
    const ran = marker();
    const plan = await planAdd({ blocks: [boobyTrapped(ran)], cwd: await initialised(), yes: true });
    expect(existsSync(ran)).toBe(false);
    expect(plan.migrations[0]?.sql).toContain("CREATE TABLE IF NOT EXISTS idempotency_records (");
  });

  it.each([
    ["--dry-run", { dryRun: true }],
    ["without an answer to the prompt", {}],
    ["--yes", { yes: true }],
  ])(
    "an item whose migration is its schema module (code, not data) is refused (%s), and the module never runs",
    async (_, options) => {
      const ran = marker();
      const dir = await initialised();
      const source = boobyTrapped(ran, namesItsSchemaModule);
      const error = await rejection(runAdd({ blocks: [source], cwd: dir, install: false, ...options }));
      expect(existsSync(ran)).toBe(false);
      expect(error.code).toBe("INVALID_REGISTRY");
      expect(error.message).toContain(source);
      expect(error.message).toContain("idempotency/stores/postgres-schema.ts");
      expect(existsSync(path.join(dir, "src/blocks"))).toBe(false);
    },
  );
});

describe("npm option injection: an item's package specifier reaches the package manager as an option (issue 25)", () => {
  const fakeBin = mkdtempSync(path.join(scratch, "bin-"));
  const calls = path.join(fakeBin, "calls.log");
  const savedPath = process.env.PATH;
  beforeAll(() => {
    // A package manager that only records it was called: the real one would reach out to the attacker's registry.
    for (const manager of ["npm", "pnpm", "yarn", "bun"]) {
      writeFileSync(path.join(fakeBin, manager), `#!/bin/sh\necho "${manager} $*" >> ${JSON.stringify(calls)}\n`);
      chmodSync(path.join(fakeBin, manager), 0o755);
    }
    process.env.PATH = `${fakeBin}${path.delimiter}${savedPath ?? ""}`;
  });
  afterEach(() => rmSync(calls, { force: true }));
  afterAll(() => {
    process.env.PATH = savedPath;
  });

  const item = (section: string, spec: string) => ({
    name: "evil",
    type: "registry:item",
    [section]: [spec],
    files: [
      {
        path: "registry/evil/index.ts",
        type: "registry:file",
        content: "export {};\n",
        target: "~/src/blocks/evil/index.ts",
      },
    ],
  });

  it.each([
    ["dependencies", "--registry=http://attacker/@1"],
    ["devDependencies", "--registry=http://attacker/@1"],
    ["dependencies", "file:../x"],
    ["dependencies", "pkg@file:../x"],
    ["dependencies", "git+https://github.com/attacker/evil.git"],
    ["dependencies", "http://attacker/evil.tgz"],
    ["dependencies", "../evil"],
    ["dependencies", "attacker/evil"],
    ["devDependencies", "pkg@npm:evil@1"],
    ["dependencies", "-D"],
  ])(
    "the %s specifier %s is refused, naming the item and the specifier, and no package manager runs",
    async (section, spec) => {
      const dir = await initialised();
      const source = writeItem(item(section, spec));
      const error = await rejection(runAdd({ blocks: [source], cwd: dir, yes: true }));
      expect(error.code).toBe("INVALID_REGISTRY");
      expect(error.message).toContain(source);
      expect(error.message).toContain(JSON.stringify(spec));
      expect(existsSync(calls)).toBe(false);
      expect(existsSync(path.join(dir, "src/blocks"))).toBe(false);
    },
  );

  it("valid specifiers reach the package manager after `--`", async () => {
    const dir = await initialised();
    const source = writeItem({
      ...item("dependencies", "@scope/pkg.js@^1.2.3 || >=2.0.0-rc.1"),
      devDependencies: ["plain-name", "tagged@next"],
    });
    await runAdd({ blocks: [source], cwd: dir, yes: true });
    expect(readFileSync(calls, "utf8").trim().split("\n")).toEqual([
      "npm install -- @scope/pkg.js@^1.2.3 || >=2.0.0-rc.1",
      "npm install --save-dev -- plain-name@latest tagged@next",
    ]);
  });
});

describe("two items of one name", () => {
  it("are refused, naming both, instead of one's files landing among the other's", async () => {
    const files = (name: string) => [
      {
        path: `registry/same/${name}.ts`,
        type: "registry:file",
        content: "export {};\n",
        target: `~/src/blocks/same/${name}.ts`,
      },
    ];
    const first = writeItem({ name: "same", type: "registry:item", files: files("a") });
    const second = writeItem({ name: "same", type: "registry:item", files: files("b") });
    const error = await rejection(
      runAdd({ blocks: [first, second], cwd: await initialised(), yes: true, install: false }),
    );
    expect(error.message).toContain(`Two registry items are named "same": ${first}, ${second}`);
  });
});
