// What the CLI hands a package manager: a registry package name with a version range or tag, never an option, URL or path.
//
// Package managers read far more than names from their arguments: `--registry=<url>` (an option),
// `file:../x`, `git+https://...`, `http://.../x.tgz`, `user/repo` (GitHub), `npm:other@1` (an alias).
// The registry's block.json and every registry item only ever need a name and a range, so anything
// else is refused here, before a package manager is started.

/** npm's rules for a new package name: lower-case and URL-safe, optionally scoped, not starting with `.`, `_` or `-`. */
const NAME = /^(?:@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;
const RESERVED = new Set(["node_modules", "favicon.ico"]);
/** A semver range (`^1.2.3`, `>=1 <2 || 3.x`, `1.0.0-rc.1+build`) or a dist-tag (`latest`, `next`): no `:`, `/`, `@` or `#`. */
const RANGE = /^[0-9A-Za-z^~<>=|*.+ -]+$/;

export type PackageSpecifier = { name: string; range: string };

/**
 * Splits `name@range` (a scoped name keeps its leading `@`; no range means `latest`), or returns
 * why the string is not a package name with a version.
 *
 * @example
 * parsePackageSpecifier("@types/pg@^8.23.1"); // { name: "@types/pg", range: "^8.23.1" }
 * parsePackageSpecifier("--registry=http://attacker/@1"); // "is not a package name: ..."
 */
export function parsePackageSpecifier(specifier: string): PackageSpecifier | string {
  const at = specifier.lastIndexOf("@");
  const name = at > 0 ? specifier.slice(0, at) : specifier;
  const range = at > 0 ? specifier.slice(at + 1) : "latest";
  return packageProblem(name, range) ?? { name, range };
}

/**
 * Why `name` with `range` is not something to install from the registry, or undefined when it is.
 *
 * @example
 * packageProblem("pg", "^8.23.1"); // undefined
 * packageProblem("pg", "file:../pg"); // "has the version \"file:../pg\", which is not a version range or tag ..."
 */
export function packageProblem(name: string, range: string): string | undefined {
  if (name.length > 214 || !NAME.test(name) || RESERVED.has(name)) {
    return `names ${JSON.stringify(name)}, which is not an npm package name (lower-case letters, digits, "-", "." and "_", optionally @scope/)`;
  }
  if (
    range.length === 0 ||
    range.length > 256 ||
    range.trim() !== range ||
    range.startsWith("-") ||
    !RANGE.test(range)
  ) {
    return `has the version ${JSON.stringify(range)}, which is not a version range or tag (no URL, path, git or alias)`;
  }
  return undefined;
}
