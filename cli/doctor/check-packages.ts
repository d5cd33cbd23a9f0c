// Packages the vendored runtime code imports must be dependencies: production installs skip devDependencies.
import { builtinModules } from "node:module";
import path from "node:path";
import type { Lock } from "../config/lock-file.js";
import { readIfExists } from "../utils/files.js";
import { finding, type Finding } from "./finding.js";

type PackageJson = { dependencies?: Record<string, string>; devDependencies?: Record<string, string> };

/**
 * @example
 * await checkPackages("/app", lock, pkg); // "pg" imported by src/blocks/idempotency/stores/postgres-store.ts, only in devDependencies
 */
export async function checkPackages(root: string, lock: Lock, pkg: PackageJson): Promise<Finding[]> {
  const dev = new Set(Object.keys(pkg.devDependencies ?? {}).filter((name) => !(name in (pkg.dependencies ?? {}))));
  const findings: Finding[] = [];
  const files = Object.values(lock.blocks).flatMap((block) => Object.keys(block.files));
  for (const file of files.filter(
    (candidate) =>
      /\.[cm]?tsx?$/.test(candidate) && !/\.test\.[cm]?tsx?$/.test(candidate) && !candidate.includes("/testing/"),
  )) {
    const text = await readIfExists(path.join(root, file));
    if (text === undefined) continue;
    for (const match of text.matchAll(
      /^\s*(?:import|export)\s+(?!type\s)(?:[^'"]*?\s+from\s+)?["']([^"'.][^"']*)["']/gm,
    )) {
      const name = packageName(match[1] as string);
      if (!dev.has(name) || builtinModules.includes(name)) continue;
      const line =
        text.slice(0, match.index).split("\n").length + (match[0].match(/^\s*/)?.[0].split("\n").length ?? 1) - 1;
      findings.push(
        finding(
          "runtime-package-in-dev",
          file,
          line,
          `"${name}" is imported at runtime but declared only in devDependencies`,
        ),
      );
    }
  }
  return findings;
}

function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] as string);
}
