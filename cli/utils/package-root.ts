// Finds the CLI's own package (registry/ and templates/ ship beside dist/), from source or from dist.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The npm name (the bin stays `blocks`): "blocks" belongs to another package on the registry. */
export const PACKAGE_NAME = "backend-blocks";

let cached: string | undefined;

/**
 * The folder holding the CLI's package.json, found by walking up from this file.
 *
 * @example
 * const manifest = path.join(packageRoot(), "registry", "registry.json");
 */
export function packageRoot(): string {
  if (cached) return cached;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!isOwnPackage(dir)) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error("blocks: cannot find the CLI's own package.json above its source.");
    dir = parent;
  }
  cached = dir;
  return dir;
}

function isOwnPackage(dir: string): boolean {
  const file = path.join(dir, "package.json");
  if (!existsSync(file) || !existsSync(path.join(dir, "registry"))) return false;
  return (JSON.parse(readFileSync(file, "utf8")) as { name?: string }).name === PACKAGE_NAME;
}

/**
 * The CLI's version, for the lock file.
 *
 * @example
 * cliVersion(); // "0.1.0"
 */
export function cliVersion(): string {
  return (JSON.parse(readFileSync(path.join(packageRoot(), "package.json"), "utf8")) as { version: string }).version;
}
