// Turns block names into the ordered blocks to add (dependencies first) and picks their files per framework.
import { BlocksError } from "../utils/errors.js";
import type { Registry, RegistryBlock, RegistryFile, RegistryTemplate } from "./types.js";

/**
 * @example
 * resolveBlocks(registry, ["idempotency"]).map((b) => b.name); // dependencies first, each once
 */
export function resolveBlocks(registry: Registry, names: string[]): RegistryBlock[] {
  const ordered: RegistryBlock[] = [];
  // By the block a name resolves to: an item's dependency may spell one block as `@acme/x`, its URL or "x".
  const visit = (name: string, trail: string[]) => {
    const block = findBlock(registry, name);
    if (ordered.includes(block)) return;
    if (trail.includes(block.name))
      throw new BlocksError("INVALID_REGISTRY", `Block dependency cycle: ${[...trail, block.name].join(" -> ")}.`);
    for (const dependency of block.registryDependencies ?? []) visit(dependency, [...trail, block.name]);
    ordered.push(block);
  };
  for (const name of names) visit(name, []);
  return ordered;
}

/**
 * Looks a block up by name, failing with the list of names that exist.
 *
 * @example
 * findBlock(registry, "cache"); // throws UNKNOWN_BLOCK listing the blocks that exist
 */
export function findBlock(registry: Registry, name: string): RegistryBlock {
  const wanted = registry.sources?.[name] ?? name;
  const block = registry.blocks.find((candidate) => candidate.name === wanted);
  if (block) return block;
  const known = registry.blocks.map((candidate) => candidate.name);
  throw new BlocksError("UNKNOWN_BLOCK", `There is no block named "${name}".`, {
    suggestion: `Available blocks: ${known.join(", ")}. Run \`blocks list\` for descriptions.`,
  });
}

export type FileSelection = { frameworks: string[]; tests: boolean };

/**
 * The files that compile in this project: framework-specific ones only for the chosen frameworks.
 *
 * @example
 * selectFiles(block, { frameworks: ["express"], tests: true }); // core + express adapter + their tests
 */
export function selectFiles(block: RegistryBlock, selection: FileSelection): RegistryFile[] {
  return block.files.filter((file) => fits(file, selection) && (selection.tests || !file.test));
}

/**
 * The templates rendered for this block under the same framework rule.
 *
 * @example
 * selectTemplates(block, { frameworks: [], tests: true }); // the maintenance-job stub
 */
export function selectTemplates(block: RegistryBlock, selection: FileSelection): RegistryTemplate[] {
  return (block.templates ?? []).filter((template) => fits(template, selection));
}

function fits(entry: { framework?: string }, selection: FileSelection): boolean {
  return entry.framework === undefined || selection.frameworks.includes(entry.framework);
}

/**
 * Checks `--framework` values against the manifest.
 *
 * @example
 * checkFrameworks(registry, ["sveltekit"]); // throws UNKNOWN_FRAMEWORK
 */
export function checkFrameworks(registry: Registry, names: string[]): string[] {
  for (const name of names) {
    if (!(name in registry.frameworks)) {
      throw new BlocksError("UNKNOWN_FRAMEWORK", `Unknown framework "${name}".`, {
        suggestion: `Use one of: ${Object.keys(registry.frameworks).join(", ")} (or "none" for the core only).`,
      });
    }
  }
  return names;
}

/**
 * The frameworks whose packages the project declares.
 *
 * @example
 * detectFrameworks(registry, new Set(["express", "pg"])); // ["express"]
 */
export function detectFrameworks(registry: Registry, declared: Set<string>): string[] {
  return Object.entries(registry.frameworks)
    .filter(([, framework]) => framework.packages.some((name) => declared.has(name)))
    .map(([name]) => name);
}
