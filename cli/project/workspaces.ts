// Finds the packages of a workspaces root (npm and yarn `workspaces`, pnpm-workspace.yaml), so `init` never targets the root by mistake.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { toPosix } from "../utils/files.js";
import type { PackageJson } from "./package-json.js";

/**
 * Project-relative folders of the workspace packages declared at `root`; empty when `root` is no workspaces root.
 * Patterns are folders or one trailing wildcard level (`apps/*`), as nearly every monorepo writes them.
 *
 * @example
 * workspacePackages("/repo", { workspaces: ["apps/*"] }); // ["apps/api", "apps/web"]
 */
export function workspacePackages(
  root: string,
  pkg: PackageJson & { workspaces?: string[] | { packages?: string[] } },
): string[] {
  const declared = Array.isArray(pkg.workspaces) ? pkg.workspaces : (pkg.workspaces?.packages ?? pnpmPatterns(root));
  const found = new Set<string>();
  for (const raw of declared) {
    if (raw.startsWith("!")) continue;
    const pattern = toPosix(raw).replace(/^\.\//, "").replace(/\/+$/, "");
    const parts = pattern.split("/");
    const wildcard = parts.findIndex((part) => part.includes("*"));
    const base = wildcard === -1 ? pattern : parts.slice(0, wildcard).join("/");
    const candidates =
      wildcard === -1 ? [base] : subfolders(path.join(root, base)).map((name) => path.posix.join(base, name));
    for (const candidate of candidates)
      if (existsSync(path.join(root, candidate, "package.json"))) found.add(candidate);
  }
  return [...found].sort();
}

function subfolders(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name !== "node_modules")
    .map((entry) => entry.name);
}

/** The `packages:` list of pnpm-workspace.yaml, read line by line (it is a flat list in practice). */
function pnpmPatterns(root: string): string[] {
  const file = path.join(root, "pnpm-workspace.yaml");
  if (!existsSync(file)) return [];
  const patterns: string[] = [];
  let inPackages = false;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (/^packages:\s*$/.test(line)) inPackages = true;
    else if (/^\S/.test(line)) inPackages = false;
    else if (inPackages) {
      const item = /^\s*-\s*["']?([^"'#]+?)["']?\s*(#.*)?$/.exec(line);
      if (item?.[1]) patterns.push(item[1]);
    }
  }
  return patterns;
}
