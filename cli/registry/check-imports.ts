// Checks a block's imports for every framework selection: relative ones resolve to a copied file, packages are declared.
import { readFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import path from "node:path";
import type { Registry, RegistryBlock, RegistryFile } from "./manifest.js";
import { resolveBlocks, selectFiles, type FileSelection } from "./resolve.js";

const posix = path.posix;
const SOURCE = /\.[cm]?tsx?$/;
const EXTENSIONS = [".ts", ".tsx", ".mts", ".cts"];

/**
 * One line per problem, empty when the block is sound. Selections: core only, each framework alone,
 * all frameworks; each with and without tests. Runtime files may import only `dependencies` (and their
 * framework's packages); tests and type-only imports may also use `devDependencies`.
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
  const problems = new Set<string>();
  for (const selection of selections) {
    const copied = blocks.flatMap((candidate) => selectFiles(candidate, selection));
    const paths = new Set(copied.map((file) => file.path));
    for (const file of copied.filter((candidate) => candidate.path.startsWith(`${block.name}/`) && SOURCE.test(candidate.path))) {
      for (const { specifier, typeOnly } of await importsOf(path.join(registry.root, file.path))) {
        const problem = checkImport(registry, blocks, file, specifier, typeOnly, paths);
        if (problem) problems.add(`${file.path}: ${problem} (frameworks: ${selection.frameworks.join(",") || "none"}, tests: ${selection.tests})`);
      }
    }
  }
  return [...problems].sort();
}

function checkImport(registry: Registry, blocks: RegistryBlock[], file: RegistryFile, specifier: string, typeOnly: boolean, paths: Set<string>): string | undefined {
  if (specifier.startsWith(".") || specifier.startsWith("@/blocks/")) {
    const base = specifier.startsWith(".") ? posix.join(posix.dirname(file.path), specifier) : specifier.slice("@/blocks/".length);
    const stem = base.replace(/\.[cm]?jsx?$/, "");
    const candidates = [base, ...EXTENSIONS.map((ext) => `${stem}${ext}`), ...EXTENSIONS.map((ext) => `${base}/index${ext}`)];
    return candidates.some((candidate) => paths.has(candidate)) ? undefined : `imports "${specifier}", which this selection does not copy`;
  }
  const name = packageName(specifier);
  if (builtinModules.includes(name) || specifier.startsWith("node:")) return undefined;
  const framework = file.framework ? registry.frameworks[file.framework] : undefined;
  const runtime = new Set([...blocks.flatMap((block) => Object.keys(block.dependencies ?? {})), ...(framework?.packages ?? []), ...Object.keys(framework?.devDependencies ?? {})]);
  if (runtime.has(name)) return undefined;
  // A feature's files come only when chosen: then its packages are installed, or (detected) the project has them.
  const features = blocks.flatMap((block) => Object.values(block.features ?? {})).filter((feature) => feature.files?.includes(file.path));
  if (features.some((feature) => name in (feature.dependencies ?? {}) || (typeOnly && feature.detect?.includes(name)))) return undefined;
  const dev = new Set(blocks.flatMap((block) => Object.keys(block.devDependencies ?? {})));
  if ((file.test || typeOnly) && dev.has(name)) return undefined;
  return dev.has(name) ? `imports "${name}" at runtime, but it is only a devDependency` : `imports the undeclared package "${name}"`;
}

function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] as string);
}

/** Static, re-export and dynamic import specifiers, and whether the static ones are type-only. */
async function importsOf(file: string): Promise<Array<{ specifier: string; typeOnly: boolean }>> {
  const text = await readFile(file, "utf8");
  const found: Array<{ specifier: string; typeOnly: boolean }> = [];
  const statement = /^\s*(import|export)\s+(type\s+)?(?:[^'"]*?\s+from\s+)?["']([^"']+)["']/gm;
  for (const match of text.matchAll(statement)) found.push({ specifier: match[3] as string, typeOnly: Boolean(match[2]) });
  for (const match of text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) found.push({ specifier: match[1] as string, typeOnly: false });
  return found;
}
