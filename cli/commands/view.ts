// `blocks view <block|item>`: what a block or registry item holds (files, packages, dependencies) and, in a project, what `add` would write.
import path from "node:path";
import { Command } from "commander";
import { planAdd } from "../add/plan-add.js";
import { planJson, reportPlan } from "../add/report-plan.js";
import { isItemSource, loadRegistry } from "../registry/manifest.js";
import { projectConfig } from "../registry/project-registries.js";
import { resolveBlocks } from "../registry/resolve.js";
import type { RegistryBlock } from "../registry/types.js";
import { handleError } from "../utils/handle-error.js";
import { highlighter } from "../utils/highlighter.js";
import { configureOutput, logger, printJson } from "../utils/logger.js";

export type ViewOptions = { name: string; cwd?: string; registry?: string; json?: boolean; silent?: boolean };

/** Where blocks land when there is no blocks.json yet: what `blocks init --yes` picks in most projects. */
const DEFAULT_DIR = "src/blocks";

/**
 * @example
 * const view = await runView({ name: "@acme/audit-log", cwd: "/app" });
 * view.files[0]; // { path: "audit-log/index.ts", target: "src/blocks/audit-log/index.ts" }
 * view.add?.files; // in a project: every file `blocks add` would write, with its state
 */
export async function runView(options: ViewOptions) {
  const root = path.resolve(options.cwd ?? process.cwd());
  const config = await projectConfig(root);
  const replace = { modified: false, conflicts: false };
  // In a project the plan is the answer to "what would add write"; its registry has the item, fetched once.
  const plan = config
    ? await planAdd({
        blocks: [options.name],
        cwd: root,
        dryRun: true,
        yes: true,
        ...(options.registry ? { registry: options.registry } : {}),
      })
    : undefined;
  const blocks =
    plan?.blocks ?? resolveBlocks(await loadRegistry(options.registry, { items: [options.name] }), [options.name]);
  const block = blocks.at(-1) as RegistryBlock;
  const dir = config?.dir ?? DEFAULT_DIR;
  const view = {
    ok: true,
    name: block.name,
    source: block.origin
      ? `${block.origin.registry}/${block.origin.item}`
      : isItemSource(options.name)
        ? options.name
        : "built-in",
    description: block.description,
    registryDependencies: block.registryDependencies ?? [],
    /** The blocks `add` brings, dependencies first. */
    blocks: blocks.map((candidate) => candidate.name),
    dependencies: block.dependencies ?? {},
    devDependencies: block.devDependencies ?? {},
    features: Object.entries(block.features ?? {}).map(([name, feature]) => ({
      name,
      flag: `--${feature.flag ?? name} ${feature.choice}`,
      description: feature.description,
    })),
    files: block.files.map((file) => ({ ...file, target: path.posix.join(dir, file.target ?? file.path) })),
    migration: block.migration ? { table: block.migration.table } : null,
    add: plan ? planJson(plan, replace, { dryRun: true, installed: false }) : null,
  };
  report(view);
  if (plan) {
    logger.break();
    logger.log(highlighter.info("`blocks add` here would:"));
    reportPlan(plan, replace, { dryRun: true });
  }
  return view;
}

function report(view: {
  name: string;
  source: string;
  description: string;
  blocks: string[];
  dependencies: Record<string, string>;
  files: Array<{ target: string; framework?: string; test?: boolean }>;
}): void {
  logger.log(`${highlighter.path(view.name)} (${view.source}): ${view.description}`);
  if (view.blocks.length > 1) logger.log(`brings: ${view.blocks.join(", ")}`);
  const packages = Object.entries(view.dependencies).map(([name, range]) => `${name}@${range}`);
  if (packages.length) logger.log(`packages: ${packages.join(", ")}`);
  for (const file of view.files) {
    const tags = [file.framework, file.test ? "test" : undefined].filter(Boolean);
    logger.log(`  ${file.target}${tags.length ? highlighter.dim(` [${tags.join(", ")}]`) : ""}`);
  }
}

export const view = new Command("view")
  .description(
    "show a block or registry item: its files, packages and dependencies, and in a project what `add` would write",
  )
  .argument("<block>", "a block name, @registry/name, or an item's file or URL")
  .option("--json", "print it as JSON")
  .option("-c, --cwd <path>", "the project folder (default: the current one)")
  .option("--registry <path>", "use another registry folder (for block authors)")
  .option("-s, --silent", "print nothing but errors")
  .action(async (name: string, opts: Omit<ViewOptions, "name">) => {
    configureOutput({ silent: opts.silent || opts.json });
    try {
      const result = await runView({ ...opts, name });
      if (opts.json) printJson(result);
    } catch (err) {
      handleError(err, opts);
    }
  });
