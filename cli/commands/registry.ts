// `blocks registry build --out <dir>`: every block as a shadcn-compatible registry item, plus one slice per framework.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { Command } from "commander";
import { isInsideFolder } from "../config/module-specifier.js";
import { checkBlockImports } from "../registry/check-imports.js";
import { loadRegistry } from "../registry/manifest.js";
import { buildIndex, INDEX_FILE } from "../registry/registry-index.js";
import { buildItem, type RegistryItem } from "../registry/registry-item.js";
import { BlocksError } from "../utils/errors.js";
import { handleError } from "../utils/handle-error.js";
import { highlighter } from "../utils/highlighter.js";
import { configureOutput, logger, printJson } from "../utils/logger.js";

export type RegistryBuildOptions = {
  out: string;
  cwd?: string;
  dir?: string;
  baseUrl?: string;
  name?: string;
  registry?: string;
  json?: boolean;
  silent?: boolean;
};

/**
 * Writes `<out>/<block>.json` (every file; `blocks add` picks the frameworks),
 * `<out>/<block>-<framework>.json` (core + one framework: what `npx shadcn add` should be given)
 * and `<out>/registry.json`, the index `blocks search` reads.
 *
 * @example
 * await runRegistryBuild({ out: "public/r" }); // { written: ["public/r/idempotency.json", ...] }
 */
export async function runRegistryBuild(options: RegistryBuildOptions) {
  const dir = options.dir ?? "src/blocks";
  if (!isInsideFolder(dir))
    throw new BlocksError("INVALID_CONFIG", `--dir must be a project-relative folder without "../" (got ${dir}).`);
  const registry = await loadRegistry(options.registry);
  // A team's registry may depend on the shipped blocks (`logger`): they resolve for the checks (every `blocks` CLI carries them).
  const shipped = options.registry
    ? (await loadRegistry()).blocks.filter((block) => !registry.blocks.some((own) => own.name === block.name))
    : [];
  const checked = { ...registry, blocks: [...registry.blocks, ...shipped] };
  // An item is only as good as its imports: refuse to publish a block that would not compile somewhere.
  for (const block of registry.blocks) {
    const problems = await checkBlockImports(checked, block);
    if (problems.length) {
      throw new BlocksError(
        "INVALID_REGISTRY",
        `Block "${block.name}" has imports that do not resolve or packages it does not declare:\n  ${problems.join("\n  ")}`,
        {
          suggestion:
            "Declare the package in the block's block.json, or move the imported file so every framework selection copies it.",
        },
      );
    }
  }
  const out = path.resolve(options.cwd ?? process.cwd(), options.out);
  await mkdir(out, { recursive: true });
  const written: string[] = [];
  const items: RegistryItem[] = [];
  for (const block of registry.blocks) {
    const frameworks = [...new Set(block.files.flatMap((file) => (file.framework ? [file.framework] : [])))].sort();
    for (const framework of [undefined, ...frameworks]) {
      const item = await buildItem(registry, block, { dir, framework, baseUrl: options.baseUrl });
      if (`${item.name}.json` === INDEX_FILE)
        throw new BlocksError(
          "INVALID_REGISTRY",
          `A block named "${item.name}" would overwrite the registry's index ${INDEX_FILE}: rename it.`,
        );
      items.push(item);
      const file = path.join(out, `${item.name}.json`);
      await writeFile(file, `${JSON.stringify(item, null, 2)}\n`);
      written.push(file);
      logger.success(`${highlighter.path(path.relative(process.cwd(), file))}: ${item.files.length} file(s)`);
    }
  }
  const index = path.join(out, INDEX_FILE);
  await writeFile(
    index,
    `${JSON.stringify(buildIndex(items, { name: options.name ?? "blocks", homepage: options.baseUrl ?? "" }), null, 2)}\n`,
  );
  written.push(index);
  logger.success(`${highlighter.path(path.relative(process.cwd(), index))}: the index of ${items.length} item(s)`);
  return { ok: true, written };
}

const build = new Command("build")
  .description(
    "write each block as a shadcn registry item (<out>/<block>.json, <block>-<framework>.json per framework) and the index <out>/registry.json",
  )
  .requiredOption("-o, --out <dir>", "folder to write the items to")
  .option("--dir <path>", "project folder the items' targets point to", "src/blocks")
  .option("--base-url <url>", "URL the items will be served from (registryDependencies become URLs)")
  .option("--name <name>", "the registry's name in its index, registry.json", "blocks")
  .option("--json", "print the result as JSON")
  .option("-c, --cwd <path>", "resolve --out from this folder (default: the current one)")
  .option("--registry <path>", "use another registry folder (for block authors)")
  .option("-s, --silent", "print nothing but errors")
  .action(async (opts: RegistryBuildOptions) => {
    configureOutput({ silent: opts.silent || opts.json });
    try {
      const result = await runRegistryBuild(opts);
      if (opts.json) printJson(result);
    } catch (err) {
      handleError(err, opts);
    }
  });

export const registryCommand = new Command("registry")
  .description("tools for registry authors: build shadcn-compatible registry items")
  .addCommand(build);
