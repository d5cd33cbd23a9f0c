// `blocks diff [block]`: what changed in the vendored files against what the registry would write now.
import { existsSync } from "node:fs";
import path from "node:path";
import { Command } from "commander";
import { readConfig } from "../config/blocks-config.js";
import { readLock } from "../config/lock-file.js";
import { excludedFeatureFiles, recordedFeatures } from "../add/choose-features.js";
import { planFiles } from "../add/plan-files.js";
import { chooseVariants } from "../add/plan-variants.js";
import { lockedItems } from "../registry/locked-items.js";
import { projectFormatter } from "../format/project-formatter.js";
import { loadRegistry } from "../registry/manifest.js";
import { findBlock } from "../registry/resolve.js";
import { BlocksError } from "../utils/errors.js";
import { contentHash } from "../utils/files.js";
import { handleError } from "../utils/handle-error.js";
import { highlighter } from "../utils/highlighter.js";
import { configureOutput, logger, printJson } from "../utils/logger.js";
import { colourDiff, unifiedDiff } from "../utils/unified-diff.js";

export type DiffOptions = {
  block?: string | undefined;
  cwd?: string;
  registry?: string;
  json?: boolean;
  silent?: boolean;
};

/** edited: you changed it; outdated: the registry changed, you didn't; missing: deleted here; new: not added yet. */
export type DiffStatus = "edited" | "outdated" | "missing" | "new";

/**
 * @example
 * const { changes } = await runDiff({ cwd: "/app", block: "idempotency" });
 * changes.filter((change) => change.status === "edited"); // your local edits, with patches
 */
export async function runDiff(options: DiffOptions) {
  const root = path.resolve(options.cwd ?? process.cwd());
  const config = await readConfig(root);
  const lock = await readLock(root);
  const names = options.block ? [options.block] : Object.keys(lock.blocks);
  const registry = await loadRegistry(options.registry, {
    items: lockedItems(lock, names),
    registries: config.registries,
  });
  const changes: Array<{ block: string; file: string; status: DiffStatus; patch: string }> = [];
  const formatter = await projectFormatter(root);
  for (const name of names) {
    const locked = lock.blocks[name];
    if (!locked) {
      findBlock(registry, name);
      throw new BlocksError("UNKNOWN_BLOCK", `"${name}" has not been added to this project.`, {
        suggestion: `Run \`blocks add ${name}\` first.`,
      });
    }
    const block = findBlock(registry, name);
    // Files of features left out at `add` (never recorded) are not "new": the user chose not to have them.
    const skip = excludedFeatureFiles([block], recordedFeatures(block, locked));
    // Each variant file in the version the lock records (an older project's: as the defaults choose it).
    const context = {
      features: recordedFeatures(block, locked),
      declared: new Set<string>(),
      frameworks: locked.frameworks,
      blocks: new Set(Object.keys(lock.blocks)),
    };
    const variants = {
      [name]: chooseVariants(block, context, {
        tests: locked.tests,
        recorded: locked.variants,
        hasFile: (file) => existsSync(path.join(registry.root, file)),
      }),
    };
    const tables = locked.table === undefined ? {} : { [name]: locked.table };
    const files = await planFiles({
      root,
      config,
      registry,
      lock,
      blocks: [block],
      selection: { frameworks: locked.frameworks, tests: locked.tests },
      skip,
      variants,
      tables,
    });
    for (const file of files) {
      const recorded = locked.files[file.target];
      if (file.current === undefined) {
        if (recorded) changes.push({ block: name, file: file.target, status: "missing", patch: "" });
        else changes.push({ block: name, file: file.target, status: "new", patch: "" });
        continue;
      }
      // Formatting is no edit: a copy the project's formatter turns into the registry's version is that version.
      if (
        file.current === file.content ||
        (formatter && (await formatter.format(file.absolute, file.current)) === file.content)
      )
        continue;
      const status: DiffStatus = recorded && contentHash(file.current) === recorded ? "outdated" : "edited";
      changes.push({
        block: name,
        file: file.target,
        status,
        patch: unifiedDiff(file.target, file.content, file.current),
      });
    }
  }
  report(changes);
  return { ok: true, changes };
}

function report(changes: Array<{ file: string; status: DiffStatus; patch: string }>): void {
  if (changes.length === 0) {
    logger.success("No differences: the vendored files match the registry.");
    return;
  }
  const labels: Record<DiffStatus, string> = {
    edited: highlighter.warn("edited by you (`blocks update` merges the registry's changes into it)"),
    outdated: highlighter.info("registry has a newer version (`blocks update` brings it in)"),
    missing: highlighter.error("deleted locally"),
    new: highlighter.success("in the registry, not added yet"),
  };
  for (const change of changes) {
    logger.log(`${highlighter.path(change.file)}: ${labels[change.status]}`);
    if (change.patch) logger.log(colourDiff(change.patch));
    logger.break();
  }
}

export const diff = new Command("diff")
  .description(
    "show what changed in the vendored files against what the registry would write now; exits 0 when none, 1 when there are differences, 2 on an error",
  )
  .argument("[block]", "one block (default: every added block)")
  .option("--json", "print the changes as JSON")
  .option("-c, --cwd <path>", "the project folder (default: the current one)")
  .option("--registry <path>", "use another registry folder (for block authors)")
  .option("-s, --silent", "print nothing but errors")
  .action(async (block: string | undefined, opts: Omit<DiffOptions, "block">) => {
    configureOutput({ silent: opts.silent || opts.json });
    try {
      const result = await runDiff({ ...opts, block });
      if (opts.json) printJson(result);
      // For scripts, as diff(1): 0 no differences, 1 differences, 2 trouble.
      if (result.changes.length > 0) process.exitCode = 1;
    } catch (err) {
      handleError(err, opts, 2);
    }
  });
