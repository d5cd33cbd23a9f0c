// Checks that the project's framework is recent enough for the block's adapter (e.g. Hono >= 4.8 for `hono/route`).
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { PackageJson } from "../project/package-json.js";
import type { Registry, RegistryBlock } from "../registry/types.js";
import { BlocksError } from "../utils/errors.js";

/**
 * The installed version wins (found in node_modules up to the repository root); without one, the lowest
 * version the declared range allows. A range it cannot read ("latest", "workspace:*") is not checked.
 *
 * @example
 * checkRequiredVersions({ root, registry, blocks, frameworks: ["hono"], pkg }); // throws UNSUPPORTED_VERSION for hono 4.6
 */
export function checkRequiredVersions(input: {
  root: string;
  registry: Registry;
  blocks: RegistryBlock[];
  frameworks: string[];
  pkg: PackageJson;
}): void {
  const { root, registry, blocks, frameworks, pkg } = input;
  const used = new Set(frameworks.flatMap((name) => registry.frameworks[name]?.packages ?? []));
  for (const block of blocks) {
    for (const [name, minimum] of Object.entries(block.requires ?? {})) {
      if (!used.has(name)) continue;
      const installed = installedVersion(root, name);
      const range = pkg.dependencies?.[name] ?? pkg.devDependencies?.[name] ?? pkg.peerDependencies?.[name];
      const found = installed ?? (range === undefined ? undefined : lowestOf(range));
      if (found === undefined || compare(found, minimum) >= 0) continue;
      throw new BlocksError(
        "UNSUPPORTED_VERSION",
        `The ${block.name} block needs ${name} ${minimum} or later; this project has ${name} ${installed ? found : `${range} (allows ${found})`}.`,
        {
          suggestion: `Upgrade it (\`npm install ${name}@^${minimum}\` or your package manager's equivalent), or leave its adapter out with --framework.`,
        },
      );
    }
  }
}

/** Looks in the project, then up through enclosing packages (a workspaces root hoists), never past them. */
function installedVersion(root: string, name: string): string | undefined {
  for (let dir = root; ; dir = path.dirname(dir)) {
    const file = path.join(dir, "node_modules", name, "package.json");
    if (existsSync(file)) return (JSON.parse(readFileSync(file, "utf8")) as { version?: string }).version;
    const parent = path.dirname(dir);
    if (parent === dir || !existsSync(path.join(parent, "package.json"))) return undefined;
  }
}

/** "^4.6.2" -> "4.6.2", ">=5" -> "5.0.0", "4.x" -> "4.0.0"; anything else -> undefined. */
function lowestOf(range: string): string | undefined {
  const match = /^\s*(?:[\^~]|>=|=)?\s*v?(\d+)(?:\.(\d+|x|\*))?(?:\.(\d+|x|\*))?/.exec(range);
  if (!match) return undefined;
  const part = (value: string | undefined) => (value === undefined || value === "x" || value === "*" ? "0" : value);
  return `${match[1]}.${part(match[2])}.${part(match[3])}`;
}

function compare(a: string, b: string): number {
  const pa = a.split(/[.-]/).map(Number);
  const pb = b.split(/[.-]/).map(Number);
  for (let i = 0; i < 3; i++) {
    const diff = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}
