// `blocks list`: the blocks in the registry, their descriptions and frameworks, and which are added here.
import { existsSync } from "node:fs";
import path from "node:path";
import { Command } from "commander";
import { LOCK_FILE, readLock } from "../config/lock-file.js";
import { loadRegistry } from "../registry/manifest.js";
import { handleError } from "../utils/handle-error.js";
import { highlighter } from "../utils/highlighter.js";
import { configureOutput, logger, printJson } from "../utils/logger.js";

export type ListOptions = { cwd?: string; registry?: string; json?: boolean; silent?: boolean };

/**
 * The built-in blocks, then the blocks this project added from its registries (from the lock; their
 * registries' other items are what `blocks search` lists).
 *
 * @example
 * const { blocks } = await runList({});
 * blocks[0]; // { name: "idempotency", description: "...", frameworks: ["express", ...], added: false }
 */
export async function runList(options: ListOptions) {
  const registry = await loadRegistry(options.registry);
  const root = path.resolve(options.cwd ?? process.cwd());
  const lock = existsSync(path.join(root, LOCK_FILE)) ? await readLock(root) : undefined;
  const blocks = registry.blocks.map((block) => ({
    name: block.name,
    description: block.description,
    frameworks: [...new Set(block.files.flatMap((file) => file.framework ?? []))],
    dependsOn: block.registryDependencies ?? [],
    added: lock ? block.name in lock.blocks : false,
    registry: "built-in",
  }));
  for (const [name, locked] of Object.entries(lock?.blocks ?? {})) {
    if (!locked.registry) continue;
    const { registry: from, item } = locked.registry;
    blocks.push({
      name,
      description: `${from}/${item}`,
      frameworks: locked.frameworks,
      dependsOn: [],
      added: true,
      registry: from,
    });
  }
  const width = Math.max(...blocks.map((block) => block.name.length));
  for (const block of blocks) {
    const tags = [
      block.frameworks.length ? block.frameworks.join("/") : "",
      block.added ? highlighter.success("added") : "",
    ].filter(Boolean);
    logger.log(
      `${highlighter.path(block.name.padEnd(width))}  ${block.description}${tags.length ? highlighter.dim(`  [${tags.join(", ")}]`) : ""}`,
    );
  }
  return { ok: true, blocks };
}

export const list = new Command("list")
  .description("list the available blocks")
  .option("--json", "print the list as JSON")
  .option("-c, --cwd <path>", "the project folder, to mark added blocks (default: the current one)")
  .option("--registry <path>", "use another registry folder (for block authors)")
  .option("-s, --silent", "print nothing but errors")
  .action(async (opts: ListOptions) => {
    configureOutput({ silent: opts.silent || opts.json });
    try {
      const result = await runList(opts);
      if (opts.json) printJson(result);
    } catch (err) {
      handleError(err, opts);
    }
  });
