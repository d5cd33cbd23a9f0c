// Maps one import specifier of a registry file to what it must be in the project, via the planned file set.
import path from "node:path";
import { isModuleSpecifier } from "../config/module-specifier.js";
import { BlocksError } from "../utils/errors.js";
import type { ModuleStyle } from "../project/tsconfig.js";

/** The alias registry code uses for cross-folder imports (tsconfig.json maps it to registry/). */
export const REGISTRY_ALIAS = "@/blocks";

export type ImportContext = {
  /** The file being rewritten: its registry path (absent for templates), its block and its project-relative target. */
  from: { registryPath?: string | undefined; block?: string | undefined; target: string };
  /** Registry path -> project-relative target and block of every file this run writes. */
  planned: ReadonlyMap<string, { target: string; block: string }>;
  /** Registry paths left out on purpose (files of features not chosen): an `export ... from` one of them is dropped. */
  omitted?: ReadonlySet<string> | undefined;
  /** The project's alias for `blocksDir` (e.g. "@/blocks" or "~/blocks"), or undefined for relative imports. */
  alias: string | undefined;
  blocksDir: string;
  moduleStyle: ModuleStyle;
};

const posix = path.posix;
const SOURCE_EXTENSIONS = [".ts", ".tsx", ".mts", ".cts"];

/**
 * Returns the rewritten specifier, or undefined for a package import that stays as it is.
 * Throws UNRESOLVED_IMPORT for a registry import that matches no planned file: never guessed by basename.
 *
 * @example
 * rewriteSpecifier("./types", ctx); // "./types.js" in a NodeNext project, "./types" otherwise
 * rewriteSpecifier("@/blocks/idempotency", ctx); // "~/blocks/idempotency", or "../blocks/idempotency"
 *
 * Inside one block an `@/blocks/...` import becomes relative even where the project has an alias:
 * the block's tests then run under a plain `vitest` with no alias configuration.
 */
export function rewriteSpecifier(specifier: string, ctx: ImportContext): string | undefined {
  const base = registryBase(specifier, ctx);
  if (base === undefined) return undefined;
  const viaAlias = !specifier.startsWith(".");
  const hit = findPlanned(base, ctx.planned);
  if (!hit) {
    throw new BlocksError(
      "UNRESOLVED_IMPORT",
      `${ctx.from.registryPath ?? ctx.from.target} imports "${specifier}", which is not among the files being added.`,
      {
        suggestion:
          "The registry derives file lists from block folders: keep the imported file in the block, and framework-specific files importing only what every selection copies.",
      },
    );
  }
  const { target, block } = ctx.planned.get(hit.registryPath) as { target: string; block: string };
  const fromAlias = posix.relative(ctx.blocksDir, target);
  if (viaAlias && ctx.alias && block !== ctx.from.block && !fromAlias.startsWith("..")) {
    // The alias lands inside a string literal of generated code: never paste one that could end it.
    if (!isModuleSpecifier(ctx.alias)) {
      throw new BlocksError(
        "INVALID_CONFIG",
        `The import alias ${JSON.stringify(ctx.alias)} is not a plain module specifier.`,
        {
          suggestion:
            'Set "alias" in blocks.json to a prefix such as "@/blocks" (no quotes, spaces or newlines), or null for relative imports.',
        },
      );
    }
    return `${ctx.alias}/${format(fromAlias, hit.directory, ctx.moduleStyle)}`;
  }
  let rel = posix.relative(posix.dirname(ctx.from.target), target);
  if (!rel.startsWith(".")) rel = `./${rel}`;
  return format(rel, hit.directory, ctx.moduleStyle);
}

/**
 * Whether the specifier names a registry file left out on purpose (`ctx.omitted`): the PostgreSQL
 * store of a project that chose RedisStore, re-exported by the block's index.
 *
 * @example
 * isOmitted("./stores/postgres-store", ctx); // true after `add --store redis`
 */
export function isOmitted(specifier: string, ctx: ImportContext): boolean {
  const base = registryBase(specifier, ctx);
  return base !== undefined && ctx.omitted !== undefined && findPlanned(base, ctx.omitted) !== undefined;
}

/** The registry path a relative or `@/blocks/` specifier points at (maybe without extension); undefined for a package. */
function registryBase(specifier: string, ctx: ImportContext): string | undefined {
  const relative = specifier === "." || specifier === ".." || specifier.startsWith("./") || specifier.startsWith("../");
  const viaAlias = specifier === REGISTRY_ALIAS || specifier.startsWith(`${REGISTRY_ALIAS}/`);
  if (!relative && !viaAlias) return undefined;
  if (relative && !ctx.from.registryPath) return undefined;
  return viaAlias
    ? specifier.slice(REGISTRY_ALIAS.length + 1)
    : posix.join(posix.dirname(ctx.from.registryPath as string), specifier);
}

function findPlanned(
  base: string,
  planned: { has(path: string): boolean },
): { registryPath: string; directory: boolean } | undefined {
  const stem = base.replace(/\.(js|jsx|mjs|cjs)$/, "");
  const files = [base, ...SOURCE_EXTENSIONS.map((ext) => `${stem}${ext}`)];
  const file = files.find((candidate) => planned.has(candidate));
  if (file) return { registryPath: file, directory: false };
  const index = SOURCE_EXTENSIONS.map((ext) => `${base}/index${ext}`).find((candidate) => planned.has(candidate));
  return index ? { registryPath: index, directory: true } : undefined;
}

/** NodeNext: the emitted `.js` name, always the file (no directory imports in ESM). Otherwise extensionless. */
function format(target: string, directory: boolean, style: ModuleStyle): string {
  if (style === "nodenext")
    return target
      .replace(/\.tsx?$/, ".js")
      .replace(/\.mts$/, ".mjs")
      .replace(/\.cts$/, ".cjs");
  const bare = target.replace(/\.(tsx?|mts|cts)$/, "");
  if (!directory) return bare;
  const folder = bare.replace(/\/index$/, "");
  return folder === "." || folder === ".." ? bare : folder;
}
