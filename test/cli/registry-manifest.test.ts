// registry/registry.json lists every file under registry/<block>/ and nothing that does not exist.
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadRegistry } from "../../cli/registry/manifest.js";

const REGISTRY = path.resolve(import.meta.dirname, "../../registry");

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : [path.relative(REGISTRY, full).split(path.sep).join("/")];
  });
}

describe("registry/registry.json", async () => {
  const registry = await loadRegistry(REGISTRY);

  it.each(registry.blocks.map((block) => [block.name, block] as const))("%s: lists every file in its folder, and only files that exist", (name, block) => {
    const listed = block.files.map((file) => file.path).sort();
    expect(listed.filter((file) => !existsSync(path.join(REGISTRY, file)))).toEqual([]);
    expect(filesUnder(path.join(REGISTRY, name)).sort()).toEqual(listed);
  });

  it("has a block for every folder, and every template it names exists", () => {
    const folders = readdirSync(REGISTRY).filter((name) => statSync(path.join(REGISTRY, name)).isDirectory());
    expect(registry.blocks.map((block) => block.name).sort()).toEqual(folders.sort());
    for (const template of registry.blocks.flatMap((block) => block.templates ?? [])) {
      expect(existsSync(path.join(REGISTRY, template.template)), template.template).toBe(true);
    }
  });

  it("tags tests as tests, and framework-specific files with their framework", () => {
    for (const file of registry.blocks.flatMap((block) => block.files)) {
      if (/\.test\.ts$/.test(file.path)) expect(file.test, file.path).toBe(true);
      const framework = /\b(express|fastify|hono)\b/.exec(path.basename(file.path))?.[1];
      if (framework) expect(file.framework, file.path).toBe(framework);
    }
  });
});
