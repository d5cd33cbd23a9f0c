// The registry manifest (registry/registry.json): its types, and loading it with every path checked.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { BlocksError } from "../utils/errors.js";
import { packageRoot } from "../utils/package-root.js";

/** One file of a block; `path` is relative to the registry folder, and lands at `<dir>/<target ?? path>`. */
export type RegistryFile = {
  path: string;
  /** Copied only when the project uses this framework (adapters, framework middlewares and their tests). */
  framework?: string;
  /** A test that ships with the block; skipped by `add --no-tests`. */
  test?: boolean;
  target?: string;
};

/** A file rendered from templates/: `template` is relative to the registry folder, `target` to `<dir>`. */
export type RegistryTemplate = { template: string; target: string; framework?: string };

export type RegistryBlock = {
  name: string;
  description: string;
  /** Other blocks added first. */
  registryDependencies?: string[];
  /** `name -> range`, installed unless the project already declares the package. */
  dependencies?: Record<string, string>;
  /** What the vendored tests need (vitest, PGlite, driver typings). */
  devDependencies?: Record<string, string>;
  files: RegistryFile[];
  templates?: RegistryTemplate[];
  /** Blocks with a schema: `add` and `migrate` render their migration (default table name). */
  migration?: { table: string };
  /** Optional parts the user chooses at `add` (e.g. `cache`, `metrics`): their packages and files come only when chosen. */
  features?: Record<string, RegistryFeature>;
  /** `package -> minimum version` the block's adapters need (e.g. `hono: "4.8.0"` for `hono/route`); checked at `add`. */
  requires?: Record<string, string>;
  /** `add` writes the wiring module the user owns (handler, clients, maintenance) for this block. */
  setup?: boolean;
};

/** One optional part of a block: chosen with `--<name> <choice>` or at the prompt; `--yes` picks it when a `detect` package is declared. */
export type RegistryFeature = {
  description: string;
  /** The value that turns it on (`--cache redis`); "none" turns it off. */
  choice: string;
  detect?: string[];
  /** Installed as `dependencies` only when chosen: production code imports them. */
  dependencies?: Record<string, string>;
  /** Registry paths (also listed in, or derived into, `files`) copied only when chosen. */
  files?: string[];
};

/** A framework is "used" when the project declares one of `packages`; its dev typings come along. */
export type RegistryFramework = { packages: string[]; devDependencies?: Record<string, string> };

export type Registry = {
  version: 1;
  /** Absolute folder the manifest paths are relative to. */
  root: string;
  frameworks: Record<string, RegistryFramework>;
  blocks: RegistryBlock[];
};

/**
 * The registry that ships with the CLI.
 *
 * @example
 * await loadRegistry(defaultRegistryDir());
 */
export function defaultRegistryDir(): string {
  return path.join(packageRoot(), "registry");
}

/**
 * @example
 * const registry = await loadRegistry(); // or loadRegistry("/path/to/other/registry")
 * registry.blocks.map((block) => block.name); // ["idempotency", "logger"]
 */
export async function loadRegistry(dir = defaultRegistryDir()): Promise<Registry> {
  const file = path.join(dir, "registry.json");
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, "utf8"));
  } catch (cause) {
    throw invalid(`Cannot read the registry manifest ${file}.`, cause);
  }
  return checkRegistry(raw, path.resolve(dir));
}

function checkRegistry(raw: unknown, root: string): Registry {
  const manifest = raw as Partial<Registry>;
  if (manifest?.version !== 1 || !Array.isArray(manifest.blocks) || typeof manifest.frameworks !== "object") {
    throw invalid('The registry manifest needs "version": 1, a "frameworks" object and a "blocks" array.');
  }
  for (const block of manifest.blocks) {
    if (typeof block?.name !== "string" || !Array.isArray(block.files)) throw invalid(`Every block needs a "name" and a "files" array.`);
    for (const file of block.files) {
      if (typeof file?.path !== "string") throw invalid(`Block "${block.name}" lists a file without a "path".`);
      if (file.framework !== undefined && !(file.framework in manifest.frameworks)) {
        throw invalid(`Block "${block.name}": ${file.path} names the unknown framework "${file.framework}".`);
      }
      within(root, path.resolve(root, file.path), block.name);
    }
    for (const template of block.templates ?? []) {
      if (typeof template?.template !== "string" || typeof template.target !== "string") {
        throw invalid(`Block "${block.name}": every template needs "template" and "target".`);
      }
      within(path.dirname(root), path.resolve(root, template.template), block.name);
    }
  }
  return { version: 1, root, frameworks: manifest.frameworks, blocks: manifest.blocks };
}

/** Sources stay inside the registry (templates: inside its package): a manifest cannot make the CLI read arbitrary files. */
function within(folder: string, absolute: string, block: string): void {
  const rel = path.relative(folder, absolute);
  if (rel.startsWith("..") || path.isAbsolute(rel)) throw invalid(`Block "${block}": ${absolute} is outside ${folder}.`);
}

function invalid(message: string, cause?: unknown): BlocksError {
  return new BlocksError("INVALID_REGISTRY", message, { cause, suggestion: "Fix registry/registry.json (or the folder given to --registry)." });
}
