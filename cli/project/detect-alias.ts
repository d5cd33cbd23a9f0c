// Finds the tsconfig `paths` wildcard (`@/*`, `~/*` or custom) that reaches the blocks folder.
import path from "node:path";
import { toPosix } from "../utils/files.js";

export type AliasRoot = { prefix: string; dir: string };

/**
 * Every `"<prefix>*": ["<dir>/*"]` mapping, with `dir` absolute; exact (non-wildcard) keys are ignored.
 *
 * @example
 * aliasRoots({ "@/*": ["./src/*"] }, "/app"); // [{ prefix: "@/", dir: "/app/src" }]
 */
export function aliasRoots(paths: Record<string, string[]>, base: string): AliasRoot[] {
  const roots: AliasRoot[] = [];
  for (const [key, targets] of Object.entries(paths)) {
    const target = targets[0];
    if (!key.endsWith("*") || !target?.endsWith("*") || key.indexOf("*") !== key.length - 1) continue;
    roots.push({ prefix: key.slice(0, -1), dir: path.resolve(base, target.slice(0, -1)) });
  }
  return roots;
}

/**
 * The import alias for `blocksDir` (absolute), from the most specific mapping that contains it.
 *
 * @example
 * aliasFor([{ prefix: "@/", dir: "/app/src" }], "/app/src/blocks"); // "@/blocks"
 * aliasFor([], "/app/src/blocks"); // undefined: the project imports blocks by relative paths
 */
export function aliasFor(roots: AliasRoot[], blocksDir: string): string | undefined {
  const matches = roots
    .map((root) => ({ root, rel: path.relative(root.dir, blocksDir) }))
    .filter(({ rel }) => !rel.startsWith("..") && !path.isAbsolute(rel))
    .sort((a, b) => b.root.dir.length - a.root.dir.length);
  const best = matches[0];
  if (!best) return undefined;
  const joined = `${best.root.prefix}${toPosix(best.rel)}`;
  return joined.endsWith("/") ? joined.slice(0, -1) : joined;
}

/**
 * The preferred root for a new blocks folder: `@/`, then `~/`, then any other wildcard mapping.
 *
 * @example
 * preferredRoot([{ prefix: "~/", dir: "/app/src" }, { prefix: "@/", dir: "/app/src" }]); // the "@/" one
 */
export function preferredRoot(roots: AliasRoot[]): AliasRoot | undefined {
  const rank = (root: AliasRoot) => (root.prefix === "@/" ? 0 : root.prefix === "~/" ? 1 : 2);
  return [...roots].sort((a, b) => rank(a) - rank(b))[0];
}
