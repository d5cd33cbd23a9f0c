// validateItem and the package rule it shares with installCommand: what a registry item may hand the CLI.
import { describe, expect, it } from "vitest";
import { installCommand } from "../../cli/project/package-manager.js";
import { parsePackageSpecifier } from "../../cli/project/package-specifier.js";
import { loadRegistry } from "../../cli/registry/manifest.js";
import { validateItem } from "../../cli/registry/validate-item.js";

const sql = {
  maxNameLength: 40,
  statements: ["CREATE TABLE IF NOT EXISTS {{table}} (id int)"],
  drop: ["DROP TABLE IF EXISTS {{table}}"],
  tables: ["{{table}}"],
};
const file = (target: string, content = "export {};\n") => ({ path: "x", type: "registry:file", content, target });
const item = (overrides: Record<string, unknown> = {}) => ({
  name: "evil",
  type: "registry:item",
  files: [file("~/src/blocks/evil/index.ts")],
  ...overrides,
});
const problem = (raw: unknown) => {
  try {
    validateItem(raw, "item.json");
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
};

describe("validateItem", () => {
  it("returns the files by their path in the block, the packages as a map, and the migration as data", () => {
    const valid = validateItem(
      item({
        dependencies: ["pg@^8.23.1", "@types/pg"],
        files: [file("~/src/blocks/evil/stores/schema.sql", "-- {{title}}\n{{up}}\n")],
        meta: {
          blocks: { dir: "src/blocks", migration: { table: "evil_records", sql, template: "evil/stores/schema.sql" } },
        },
      }),
      "item.json",
    );
    expect(valid.files).toEqual([{ path: "stores/schema.sql", content: "-- {{title}}\n{{up}}\n" }]);
    expect(valid.dependencies).toEqual({ pg: "^8.23.1", "@types/pg": "latest" });
    expect(valid.migration).toEqual({ table: "evil_records", sql, template: "evil/stores/schema.sql" });
  });

  it.each([
    ["a description with a terminal escape", item({ description: "fine\u001b[2K\rDone." }), "description"],
    ["two files landing on one path", item({ files: [file("~/a/evil/x.ts"), file("~/b/evil/x.ts")] }), "two files"],
    ["a target with a backslash", item({ files: [file("~/src\\..\\..\\x.ts")] }), "outside the project"],
    ["a ~user target", item({ files: [file("~root/.ssh/authorized_keys")] }), "outside the project"],
    [
      "a migration title with a newline",
      item({ meta: { blocks: { migration: { table: "evil_records", sql, title: "x\nDROP TABLE users;" } } } }),
      "title",
    ],
    [
      "a migration without its SQL",
      item({ meta: { blocks: { migration: { table: "evil_records" } } } }),
      "SQL as data",
    ],
    [
      "a migration whose default table is not a table name",
      item({ meta: { blocks: { migration: { table: "x; DROP TABLE users", sql } } } }),
      "migration table",
    ],
    ["a non-string dependency", item({ dependencies: [{ name: "pg" }] }), '"dependencies"'],
  ])("refuses %s, naming the item", (_, raw, words) => {
    const message = problem(raw);
    expect(message).toContain("item.json");
    expect(message).toContain(words);
  });
});

describe("package specifiers", () => {
  it("every package of the shipped registry is one (installCommand never refuses our own)", async () => {
    const registry = await loadRegistry();
    const ranges = registry.blocks.flatMap((block) => [
      ...Object.entries({ ...block.dependencies, ...block.devDependencies }),
      ...Object.values(block.features ?? {}).flatMap((feature) =>
        Object.entries({ ...feature.dependencies, ...feature.devDependencies }),
      ),
    ]);
    expect(ranges.length).toBeGreaterThan(10);
    for (const [name, range] of ranges)
      expect(parsePackageSpecifier(`${name}@${range}`), `${name}@${range}`).toEqual({ name, range });
  });

  it("installCommand refuses what a block.json could slip in, whatever its source", () => {
    expect(() => installCommand("pnpm", ["pg@^8", "--config.registry=http://attacker/"], false)).toThrow(
      /Refusing to install "--config.registry=http:\/\/attacker\/"/,
    );
    expect(() => installCommand("npm", ["pg@github:attacker/pg"], true)).toThrow(/not a version range or tag/);
  });
});
