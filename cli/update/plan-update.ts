// Decides, file by file, what `blocks update` does: replace, merge, add, or leave alone and say why.
import { existsSync } from "node:fs";
import path from "node:path";
import { excludedFeatureFiles, recordedFeatures } from "../add/choose-features.js";
import { planDependencies, type DependencyPlan } from "../add/plan-dependencies.js";
import { readConfig, type BlocksConfig } from "../config/blocks-config.js";
import { declaredPackages, readPackageJson } from "../project/package-json.js";
import { readLock, type Lock } from "../config/lock-file.js";
import { planFiles, planSetupFiles, type PlannedFile } from "../add/plan-files.js";
import { chooseVariants } from "../add/plan-variants.js";
import { chosenVariants as chosenVariantsOf } from "../add/write-plan.js";
import { lockedItems } from "../registry/locked-items.js";
import { projectFormatter, type Formatter } from "../format/project-formatter.js";
import { loadRegistry } from "../registry/manifest.js";
import { findBlock } from "../registry/resolve.js";
import type { Registry, RegistryBlock } from "../registry/types.js";
import { BlocksError } from "../utils/errors.js";
import { contentHash } from "../utils/files.js";
import { readBase } from "./base-store.js";
import { unresolvedConflicts } from "./conflict-markers.js";
import { legacyMessage, legacySetup, legacyVariants, type LegacySetup } from "./legacy-setup.js";
import { merge3 } from "./merge3.js";
import { schemaChanges, type SchemaChange } from "./schema-changes.js";

/**
 * updated: untouched by you, replaced. merged: your edits and the registry's, combined cleanly.
 * conflict: both changed the same lines; written with markers. added: new in the registry.
 * unchanged / kept: nothing to do (the registry did not change, or you already have its version).
 * deleted: you deleted it; it stays deleted. dropped: the registry no longer has it; left in place.
 * skipped: a file blocks did not write is in the way. no-base: edited, but no base was recorded to merge from.
 * unresolved: the markers of an earlier update's conflict are still in the file; nothing is merged into it until they go.
 * replaced: a wiring module an older `add` wrote, untouched since, now re-exports the block's wiring.
 * manual: the same module, edited: left alone, and `message` says what to change.
 */
export type UpdateStatus =
  | "updated"
  | "merged"
  | "conflict"
  | "unresolved"
  | "added"
  | "unchanged"
  | "kept"
  | "deleted"
  | "dropped"
  | "skipped"
  | "no-base"
  | "replaced"
  | "manual";

export type UpdatedFile = {
  block: string;
  target: string;
  status: UpdateStatus;
  /** What is written (absent: the file is not touched). */
  content?: string;
  absolute?: string;
  conflicts?: number;
  /** unresolved: the lines (1-based) where each remaining conflict starts. */
  lines?: number[];
  /** The registry version the lock records as the new base, when it moves. */
  base?: string;
  /** manual: what to change, precisely. */
  message?: string;
};

export type UpdatePlan = {
  root: string;
  lock: Lock;
  blocks: string[];
  files: UpdatedFile[];
  /** Packages the registry's version needs that package.json does not declare (listed, not installed). */
  packages: DependencyPlan;
  packageManager: BlocksConfig["packageManager"];
  /** Blocks whose store schema (the SQL `blocks migrate` writes) this update changes. */
  schemaChanges: SchemaChange[];
  /** Block -> the version of each variant file now planned (target -> registry path), for the lock. */
  variants: Record<string, Record<string, string>>;
};

/**
 * @example
 * const plan = await planUpdate({ cwd: "/app", blocks: [] }); // every added block
 * plan.files.filter((file) => file.status === "conflict");
 */
export async function planUpdate(options: {
  cwd?: string | undefined;
  blocks: string[];
  registry?: string | undefined;
}): Promise<UpdatePlan> {
  const root = path.resolve(options.cwd ?? process.cwd());
  const config = await readConfig(root);
  const lock = await readLock(root);
  const names = options.blocks.length ? options.blocks : Object.keys(lock.blocks);
  const registry = await loadRegistry(options.registry, {
    items: lockedItems(lock, names),
    registries: config.registries,
  });
  if (names.length === 0) {
    throw new BlocksError("UNKNOWN_BLOCK", "No block has been added to this project yet.", {
      suggestion: "Run `blocks add <block>` first.",
    });
  }
  const files: UpdatedFile[] = [];
  const variants: Record<string, Record<string, string>> = {};
  const everyPlanned: PlannedFile[] = [];
  const formatter = await projectFormatter(root);
  const frameworks = new Set<string>();
  const features = new Set<string>();
  for (const name of names) {
    const block = findBlock(registry, name);
    const locked = lock.blocks[name];
    if (!locked)
      throw new BlocksError("UNKNOWN_BLOCK", `"${name}" has not been added to this project.`, {
        suggestion: `Run \`blocks add ${name}\` first.`,
      });
    // The features it was added with (its store, metrics): what the lock shows, so no left-out store comes back.
    const chosen = recordedFeatures(block, locked);
    // A project set up before the wiring was block code: its module says what the lock cannot (the cache).
    const legacy = await legacySetup(root, config, registry, block, locked);
    const declared = declaredPackages(await readPackageJson(root));
    // Features chosen by detection alone (the cache, metrics): an add from before the block's variants vendored some
    // of their files whatever the choice (caches/redis-cache.ts), so such a lock cannot tell. Its module can, while it
    // is untouched; otherwise the packages decide, as \`add --yes\` would (also when the module was moved or deleted).
    const detected = Object.entries(block.features ?? {}).filter(
      ([, feature]) => !feature.flag && (feature.detect ?? []).length > 0,
    );
    if (block.setup?.legacy !== undefined && locked.variants === undefined) {
      const byPackages = detected
        .filter(([, feature]) => (feature.detect ?? []).some((name) => declared.has(name)))
        .map(([name]) => name);
      for (const [name] of detected) chosen.delete(name);
      for (const feature of legacy?.untouched ? legacy.features : byPackages) chosen.add(feature);
    }
    for (const feature of chosen) features.add(feature);
    const skip = excludedFeatureFiles([block], chosen);
    const context = {
      features: chosen,
      declared,
      frameworks: locked.frameworks,
      blocks: new Set(Object.keys(lock.blocks)),
    };
    // A lock from before the variants records none: the versions standing for what its add wrote take their place.
    const recorded = locked.variants ?? (await legacyVariants(registry, block, locked, context));
    const chosenVariants = chooseVariants(block, context, {
      tests: locked.tests,
      recorded,
      hasFile: (file) => existsSync(path.join(registry.root, file)),
    });
    const tables = locked.table === undefined ? {} : { [name]: locked.table };
    const planned = await planFiles({
      root,
      config,
      registry,
      lock,
      blocks: [block],
      selection: { frameworks: locked.frameworks, tests: locked.tests },
      skip,
      variants: { [name]: chosenVariants },
      tables,
    });
    variants[name] = chosenVariantsOf({ config, files: planned }, name);
    everyPlanned.push(...planned);
    if (legacy) files.push(await legacyFile(root, config, registry, block, planned, legacy));
    for (const framework of locked.frameworks) frameworks.add(framework);
    for (const file of planned) files.push(await decideFile(root, file, locked.files[file.target], formatter));
    const kept = new Set(planned.map((file) => file.target));
    for (const target of Object.keys(locked.files).filter((candidate) => !kept.has(candidate))) {
      files.push({ block: name, target, status: "dropped" });
    }
  }
  const blocks = names.map((name) => findBlock(registry, name));
  const packages = planDependencies(
    registry,
    blocks,
    everyPlanned,
    [...frameworks],
    declaredPackages(await readPackageJson(root)),
    features,
  );
  return {
    root,
    lock,
    blocks: names,
    files,
    packages,
    packageManager: config.packageManager,
    schemaChanges: await schemaChanges(root, lock, blocks, everyPlanned),
    variants,
  };
}

/** The old wiring module: replaced by the thin one `add` writes now when untouched, else left with precise instructions. */
async function legacyFile(
  root: string,
  config: BlocksConfig,
  registry: Registry,
  block: RegistryBlock,
  planned: PlannedFile[],
  legacy: LegacySetup,
): Promise<UpdatedFile> {
  const owned = await planSetupFiles({ root, config, registry, block, planned, replace: true });
  const content = owned.find((file) => file.target === legacy.target)?.content ?? "";
  if (legacy.untouched)
    return { block: block.name, target: legacy.target, absolute: legacy.absolute, status: "replaced", content };
  const setupDir = path.posix.dirname(
    planned.find((file) => file.variant)?.target ?? `${config.dir}/${block.name}/setup/index.ts`,
  );
  return {
    block: block.name,
    target: legacy.target,
    status: "manual",
    message: legacyMessage(legacy.target, content, setupDir),
  };
}

async function decideFile(
  root: string,
  file: PlannedFile,
  recorded: string | undefined,
  formatter: Formatter | undefined,
): Promise<UpdatedFile> {
  const { block, target, absolute } = file;
  const registry = file.content;
  const yours = file.current;
  const moveBase = { base: registry };
  if (recorded === undefined) {
    if (yours === undefined) return { block, target, absolute, status: "added", content: registry, ...moveBase };
    return yours === registry
      ? { block, target, status: "unchanged", ...moveBase }
      : { block, target, status: "skipped" };
  }
  if (yours === undefined) return { block, target, status: "deleted" };
  // The lock already names the registry's version as this file's base: without this check, the file
  // would count as "kept" and the update as done while the markers wait for the compiler to find them.
  const markers = unresolvedConflicts(yours);
  if (markers.length) return { block, target, status: "unresolved", conflicts: markers.length, lines: markers };
  if (yours === registry) return { block, target, status: "unchanged", ...moveBase };
  if (contentHash(yours) === recorded)
    return { block, target, absolute, status: "updated", content: registry, ...moveBase };
  if (contentHash(registry) === recorded) return { block, target, status: "kept" };
  const recordedBase = await readBase(root, recorded);
  if (recordedBase === undefined) return { block, target, status: "no-base" };
  const base = await formattedLikeYours(recordedBase, yours, absolute, formatter);
  if (yours === base) return { block, target, absolute, status: "updated", content: registry, ...moveBase };
  const merged = merge3(base, yours, registry);
  if (merged.text === yours) return { block, target, status: "kept", ...moveBase };
  const status = merged.conflicts ? "conflict" : "merged";
  return { block, target, absolute, status, content: merged.text, conflicts: merged.conflicts, ...moveBase };
}

/**
 * The base as the project's formatter writes it now, when your copy is in that format: a project that
 * reformatted its vendored files (a new formatter, another config) then merges real edits only, and a
 * file you only reformatted counts as untouched. Your copy in another format keeps the base as it was.
 */
async function formattedLikeYours(
  base: string,
  yours: string,
  file: string,
  formatter: Formatter | undefined,
): Promise<string> {
  if (!formatter || (await formatter.format(file, yours)) !== yours) return base;
  return formatter.format(file, base);
}

/**
 * The lock after the update: each file whose base moved records the registry version's hash;
 * dropped files are no longer tracked.
 *
 * @example
 * await writeLock(root, nextLock(plan, cliVersion()));
 */
export function nextLock(plan: UpdatePlan, version: string): Lock {
  const lock: Lock = { version: 1, blocks: { ...plan.lock.blocks }, migrations: { ...plan.lock.migrations } };
  for (const name of plan.blocks) {
    const previous = lock.blocks[name];
    if (!previous) continue;
    const files = { ...previous.files };
    for (const file of plan.files.filter((candidate) => candidate.block === name)) {
      if (file.status === "replaced" || file.status === "manual") continue;
      if (file.status === "dropped") delete files[file.target];
      else if (file.base !== undefined) files[file.target] = contentHash(file.base);
    }
    const variants = { ...previous.variants, ...plan.variants[name] };
    lock.blocks[name] = { ...previous, version, files, ...(Object.keys(variants).length ? { variants } : {}) };
  }
  return lock;
}
