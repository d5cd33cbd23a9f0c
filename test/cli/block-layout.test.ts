// One layout and naming scheme across the blocks: what a user who knows one block finds in the next.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const REGISTRY = path.resolve(import.meta.dirname, "../../registry");
const FRAMEWORKS = ["express", "fastify", "hono", "koa", "nestjs", "fetch"];

const blocks = readdirSync(REGISTRY).filter((name) => {
  try {
    return statSync(path.join(REGISTRY, name, "block.json")).isFile();
  } catch {
    return false;
  }
});

function filesOf(block: string, dir = ""): string[] {
  return readdirSync(path.join(REGISTRY, block, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = dir ? `${dir}/${entry.name}` : entry.name;
    return entry.isDirectory() ? filesOf(block, relative) : [relative];
  });
}

const isTest = (file: string) => file.endsWith(".test.ts") || file.split("/").includes("testing");

describe("every block's layout", () => {
  it("finds the blocks", () => {
    expect(blocks).toEqual(expect.arrayContaining(["idempotency", "logger", "rate-limiter", "error-handler"]));
  });

  it.each(blocks)("%s: block.json, README.md and index.ts at its root", (block) => {
    const files = filesOf(block);
    expect(files).toEqual(expect.arrayContaining(["block.json", "README.md", "index.ts"]));
  });

  it.each(blocks)("%s: kebab-case file and folder names (the code lands in users' projects)", (block) => {
    const offending = filesOf(block)
      .flatMap((file) => file.split("/"))
      .filter((part) => !/^([A-Z]+\.md|[a-z0-9]+(-[a-z0-9]+)*(\.[a-z0-9]+)*)$/.test(part));
    expect([...new Set(offending)]).toEqual([]);
  });

  it.each(blocks)("%s: a framework's code is adapters/<framework>.ts or a <name>-<framework>.ts variant", (block) => {
    const misplaced = filesOf(block).filter((file) => {
      const parts = file.split("/");
      const stem = (parts.at(-1) ?? "").replace(/(\.test)?\.ts$/, "");
      if (!FRAMEWORKS.includes(stem)) return false;
      return parts.length !== 2 || parts[0] !== "adapters";
    });
    expect(misplaced).toEqual([]);
    expect(filesOf(block).some((file) => file.startsWith("middleware/"))).toBe(false);
  });

  it.each(blocks)("%s: every runtime file opens with a comment saying what it holds", (block) => {
    const bare = filesOf(block)
      .filter((file) => file.endsWith(".ts") && !isTest(file))
      .filter((file) => !readFileSync(path.join(REGISTRY, block, file), "utf8").startsWith("//"));
    expect(bare).toEqual([]);
  });
});
