// Checks a block's imports for every framework selection: relative ones resolve to a copied file, packages are declared.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import path from "node:path";
import { excludedFeatureFiles } from "../add/choose-features.js";
import { testOf } from "./manifest.js";
import { resolveBlocks, selectFiles, type FileSelection } from "./resolve.js";
import type { Registry, RegistryBlock, RegistryFile } from "./types.js";

const posix = path.posix;
const SOURCE = /\.[cm]?tsx?$/;
const EXTENSIONS = [".ts", ".tsx", ".mts", ".cts"];

/**
 * One line per problem, empty when the block is sound. Selections: core only, each framework alone,
 * all frameworks; each with and without tests; each with every feature, and with each feature left out
 * (with the features that need it), as `add` leaves out a store not chosen. Runtime files may import only
 * `dependencies` (and their framework's packages); tests and type-only imports may also use `devDependencies`.
 * An `export ... from` a file left out is fine: `add` drops that line.
 *
 * @example
 * await checkBlockImports(registry, findBlock(registry, "idempotency")); // []
 */
export async function checkBlockImports(registry: Registry, block: RegistryBlock): Promise<string[]> {
  const frameworks = [...new Set(block.files.flatMap((file) => (file.framework ? [file.framework] : [])))];
  const selections: FileSelection[] = [[], ...frameworks.map((name) => [name]), frameworks].flatMap((chosen) => [
    { frameworks: chosen, tests: true },
    { frameworks: chosen, tests: false },
  ]);
  const blocks = resolveBlocks(registry, [block.name]);
  const features = Object.entries(block.features ?? {});
  const leftOut = [
    { name: "", files: new Set<string>() },
    ...features.map(([name]) => {
      // The feature and those that need it are off, every other one on: `add`'s own rule decides what is left out.
      const off = new Set(
        features.filter(([other, feature]) => other === name || feature.needs === name).map(([other]) => other),
      );
      return {
        name,
        files: excludedFeatureFiles(
          [block],
          new Set(features.map(([other]) => other).filter((other) => !off.has(other))),
        ),
      };
    }),
  ];
  const imports = new Map<string, Awaited<ReturnType<typeof importsOf>>>();
  const problems = new Set<string>();
  for (const selection of selections) {
    for (const omitted of leftOut) {
      const copied = blocks
        .flatMap((candidate) => selectFiles(candidate, selection))
        .filter((file) => !omitted.files.has(file.path));
      // A variant file's target is always copied (some version of it), under the name its importers use.
      const paths = new Set([
        ...copied.map((file) => file.path),
        ...blocks.flatMap((candidate) => (candidate.variants ?? []).map((variant) => variant.target)),
      ]);
      for (const file of copied.filter(
        (candidate) => candidate.path.startsWith(`${block.name}/`) && SOURCE.test(candidate.path),
      )) {
        const source = path.join(registry.root, file.path);
        if (!imports.has(source)) imports.set(source, await importsOf(source));
        for (const found of imports.get(source) ?? []) {
          const problem = checkImport(registry, blocks, file, found, paths, omitted.files);
          const without = omitted.name ? `, without ${omitted.name}` : "";
          if (problem)
            problems.add(
              `${file.path}: ${problem} (frameworks: ${selection.frameworks.join(",") || "none"}, tests: ${selection.tests}${without})`,
            );
        }
      }
    }
  }
  for (const problem of await checkVariants(registry, blocks, block, imports)) problems.add(problem);
  return [...problems].sort();
}

/**
 * Each version of each variant file: its imports resolve among the block's files and variant targets, and
 * its packages come with the features its `when` names, its own `packages`, or the frameworks it is for.
 */
async function checkVariants(
  registry: Registry,
  blocks: RegistryBlock[],
  block: RegistryBlock,
  imports: Map<string, FoundImport[]>,
): Promise<string[]> {
  const problems: string[] = [];
  const paths = new Set([
    ...block.files.map((file) => file.path),
    ...(block.variants ?? []).flatMap((variant) => [variant.target, ...variant.choices.map((choice) => choice.path)]),
  ]);
  for (const choice of (block.variants ?? []).flatMap((variant) => variant.choices)) {
    for (const file of [choice.path, testOf(choice.path)]) {
      const source = path.join(registry.root, file);
      if (!existsSync(source)) continue;
      if (!imports.has(source)) imports.set(source, await importsOf(source));
      const features = (choice.when?.features ?? []).map((name) => block.features?.[name]);
      const frameworks = (choice.when?.frameworks ?? []).flatMap((name) => registry.frameworks[name]?.packages ?? []);
      const allFeatures = Object.values(block.features ?? {});
      const granted = new Set([
        ...features.flatMap((feature) => [
          ...Object.keys(feature?.dependencies ?? {}),
          ...Object.keys(feature?.devDependencies ?? {}),
        ]),
        ...frameworks,
        ...(choice.when?.declared ?? []),
        ...(choice.packages ?? []).filter((name) =>
          allFeatures.some(
            (feature) => name in (feature.dependencies ?? {}) || name in (feature.devDependencies ?? {}),
          ),
        ),
      ]);
      // A version for a project with another block (the logger block's logger) may import that block.
      const others = registry.blocks
        .filter((other) => choice.when?.blocks?.includes(other.name))
        .flatMap((other) => other.files.map((entry) => entry.path));
      const visible = new Set([...paths, ...others]);
      const tagged: RegistryFile = { path: file, ...(file === choice.path ? {} : { test: true }) };
      for (const found of imports.get(source) ?? []) {
        if (
          !found.specifier.startsWith(".") &&
          !found.specifier.startsWith("@/blocks/") &&
          granted.has(packageName(found.specifier))
        )
          continue;
        const problem = checkImport(registry, blocks, tagged, found, visible, new Set());
        if (problem) problems.push(`${file}: ${problem} (variant of ${block.name})`);
      }
    }
  }
  return problems;
}

type FoundImport = { specifier: string; typeOnly: boolean; reexport: boolean };

function checkImport(
  registry: Registry,
  blocks: RegistryBlock[],
  file: RegistryFile,
  found: FoundImport,
  paths: Set<string>,
  omitted: Set<string>,
): string | undefined {
  const { specifier, typeOnly } = found;
  if (specifier.startsWith(".") || specifier.startsWith("@/blocks/")) {
    const base = specifier.startsWith(".")
      ? posix.join(posix.dirname(file.path), specifier)
      : specifier.slice("@/blocks/".length);
    const stem = base.replace(/\.[cm]?jsx?$/, "");
    const candidates = [
      base,
      ...EXTENSIONS.map((ext) => `${stem}${ext}`),
      ...EXTENSIONS.map((ext) => `${base}/index${ext}`),
    ];
    if (candidates.some((candidate) => paths.has(candidate))) return undefined;
    return found.reexport && candidates.some((candidate) => omitted.has(candidate))
      ? undefined
      : `imports "${specifier}", which this selection does not copy`;
  }
  const name = packageName(specifier);
  if (builtinModules.includes(name) || specifier.startsWith("node:")) return undefined;
  const framework = file.framework ? registry.frameworks[file.framework] : undefined;
  const runtime = new Set([
    ...blocks.flatMap((block) => Object.keys(block.dependencies ?? {})),
    ...(framework?.packages ?? []),
    ...Object.keys(framework?.devDependencies ?? {}),
  ]);
  if (runtime.has(name)) return undefined;
  // A feature's files come only when chosen: then its packages are installed, or (detected) the project has them.
  const features = blocks
    .flatMap((block) => Object.values(block.features ?? {}))
    .filter((feature) => feature.files?.includes(file.path));
  const testOrType = file.test === true || typeOnly;
  if (
    features.some(
      (feature) =>
        name in (feature.dependencies ?? {}) ||
        (testOrType && (name in (feature.devDependencies ?? {}) || feature.detect?.includes(name))),
    )
  )
    return undefined;
  const dev = new Set(blocks.flatMap((block) => Object.keys(block.devDependencies ?? {})));
  if (testOrType && dev.has(name)) return undefined;
  return dev.has(name)
    ? `imports "${name}" at runtime, but it is only a devDependency`
    : `imports the undeclared package "${name}"`;
}

function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] as string);
}

/** Static, re-export and dynamic import specifiers, whether the static ones are type-only, and which are `export ... from`. */
async function importsOf(file: string): Promise<FoundImport[]> {
  const text = await readFile(file, "utf8");
  const found: FoundImport[] = [];
  const statement = /^\s*(import|export)\s+(type\s+)?(?:[^'"]*?\s+from\s+)?["']([^"']+)["']/gm;
  for (const match of text.matchAll(statement))
    found.push({ specifier: match[3] as string, typeOnly: Boolean(match[2]), reexport: match[1] === "export" });
  for (const match of text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g))
    found.push({ specifier: match[1] as string, typeOnly: false, reexport: false });
  return found;
}
