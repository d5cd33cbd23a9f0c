// Reads the project's package.json: the anchor of every command and the source of declared dependencies.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { BlocksError } from "../utils/errors.js";

export type PackageJson = {
  name?: string;
  type?: string;
  packageManager?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
};

/**
 * @example
 * const pkg = await readPackageJson("/app"); // throws MISSING_PACKAGE_JSON when there is none
 */
export async function readPackageJson(root: string): Promise<PackageJson> {
  const file = path.join(root, "package.json");
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (cause) {
    throw new BlocksError("MISSING_PACKAGE_JSON", `No package.json in ${root}.`, {
      cause,
      suggestion:
        "Run blocks from your project's root, or pass --cwd <project folder> (run `npm init -y` first for a new project).",
    });
  }
  try {
    return JSON.parse(text) as PackageJson;
  } catch (cause) {
    throw new BlocksError("MISSING_PACKAGE_JSON", `${file} is not valid JSON.`, {
      cause,
      suggestion: "Fix the syntax error in package.json.",
    });
  }
}

/**
 * Every package the project declares, in any dependency field: `add` never reinstalls these.
 *
 * @example
 * declaredPackages({ dependencies: { express: "^5" } }).has("express"); // true
 */
export function declaredPackages(pkg: PackageJson): Set<string> {
  return new Set(
    [pkg.dependencies, pkg.devDependencies, pkg.peerDependencies, pkg.optionalDependencies].flatMap((deps) =>
      Object.keys(deps ?? {}),
    ),
  );
}
