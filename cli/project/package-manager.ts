// Detects the project's package manager from its lockfile (or `packageManager`) and builds install commands.
import { existsSync } from "node:fs";
import path from "node:path";
import { BlocksError } from "../utils/errors.js";
import type { PackageJson } from "./package-json.js";
import { parsePackageSpecifier } from "./package-specifier.js";

export const PACKAGE_MANAGERS = ["npm", "pnpm", "yarn", "bun"] as const;
export type PackageManager = (typeof PACKAGE_MANAGERS)[number];

const LOCKFILES: Array<[string, PackageManager]> = [
  ["pnpm-lock.yaml", "pnpm"],
  ["yarn.lock", "yarn"],
  ["bun.lock", "bun"],
  ["bun.lockb", "bun"],
  ["package-lock.json", "npm"],
  ["npm-shrinkwrap.json", "npm"],
];

/**
 * Looks for a lockfile from the project up to its repository root (workspaces keep it there).
 *
 * @example
 * detectPackageManager("/repo/apps/api", pkg); // "pnpm" when /repo/pnpm-lock.yaml exists
 */
export function detectPackageManager(root: string, pkg: PackageJson): PackageManager {
  const declared = pkg.packageManager?.split("@")[0];
  if (isPackageManager(declared)) return declared;
  for (let dir = root; ; dir = path.dirname(dir)) {
    const found = LOCKFILES.find(([file]) => existsSync(path.join(dir, file)));
    if (found) return found[1];
    if (existsSync(path.join(dir, ".git")) || path.dirname(dir) === dir) return "npm";
  }
}

/**
 * Narrows a string (from blocks.json or `packageManager`) to a supported manager.
 *
 * @example
 * isPackageManager("pnpm"); // true
 */
export function isPackageManager(value: unknown): value is PackageManager {
  return typeof value === "string" && (PACKAGE_MANAGERS as readonly string[]).includes(value);
}

/**
 * The argv that adds `packages` (as `name@range`), as runtime or dev dependencies. The packages come
 * after `--`, and each must be a registry name with a range: nothing in them can become an option.
 *
 * @example
 * installCommand("pnpm", ["vitest@^4"], true); // ["pnpm", "add", "-D", "--", "vitest@^4"]
 */
export function installCommand(manager: PackageManager, packages: string[], dev: boolean): string[] {
  for (const specifier of packages) {
    const parsed = parsePackageSpecifier(specifier);
    if (typeof parsed === "string") {
      throw new BlocksError("INVALID_REGISTRY", `Refusing to install ${JSON.stringify(specifier)}: it ${parsed}.`, {
        suggestion: 'Declare packages as { "name": "range" } in block.json; install anything else yourself.',
      });
    }
  }
  const verb = manager === "npm" ? "install" : "add";
  const devFlag = { npm: "--save-dev", pnpm: "-D", yarn: "-D", bun: "--dev" }[manager];
  return [manager, verb, ...(dev ? [devFlag] : []), "--", ...packages];
}

/**
 * How the project runs a package's bin, installed or not: the "Next:" hints use it.
 *
 * @example
 * execCommand("pnpm"); // "pnpm dlx"
 */
export function execCommand(manager: PackageManager): string {
  return { npm: "npx", pnpm: "pnpm dlx", yarn: "yarn dlx", bun: "bunx" }[manager];
}

/**
 * How the project runs a bin it has installed (vitest after `add`).
 *
 * @example
 * localExecCommand("pnpm"); // "pnpm exec"
 */
export function localExecCommand(manager: PackageManager): string {
  return { npm: "npx", pnpm: "pnpm exec", yarn: "yarn", bun: "bunx" }[manager];
}
