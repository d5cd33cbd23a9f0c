// Works out which npm packages `add` installs: the blocks' and the chosen frameworks', minus what is declared.
import type { PlannedFile } from "./plan-files.js";
import type { Registry, RegistryBlock } from "../registry/types.js";
import { BlocksError } from "../utils/errors.js";

export type DependencyPlan = { dependencies: string[]; devDependencies: string[] };

/**
 * Framework packages themselves are never installed: a framework is only chosen because the project has it.
 * A chosen feature's packages (pg, ioredis, prom-client) are runtime dependencies: production code imports them;
 * its devDependencies are what its vendored tests need (PGlite for the pg client's).
 * `wiring` names the packages the generated wiring imports (a pg Pool under Kysely): each comes with
 * the range, and as the kind of dependency, that a feature of the block gives it, chosen or not.
 *
 * @example
 * planDependencies(registry, blocks, files, ["express"], declared, new Set(["postgres-store", "client-pg"]));
 * // { dependencies: ["pg@^8.23.1"], devDependencies: ["@electric-sql/pglite@^0.5.17", "@types/pg@^8.23.1", "vitest@^4.1.12", ...] }
 */
export function planDependencies(
  registry: Registry,
  blocks: RegistryBlock[],
  files: PlannedFile[],
  frameworks: string[],
  declared: Set<string>,
  features: Set<string> = new Set(),
  wiring: string[] = [],
): DependencyPlan {
  const runtime = new Map<string, string>();
  const dev = new Map<string, string>();
  for (const block of blocks) {
    for (const [name, range] of Object.entries(block.dependencies ?? {})) runtime.set(name, range);
    for (const [name, range] of Object.entries(block.devDependencies ?? {})) dev.set(name, range);
    for (const [feature, { dependencies, devDependencies }] of Object.entries(block.features ?? {})) {
      for (const [name, range] of Object.entries(dependencies ?? {}))
        if (features.has(feature) || wiring.includes(name)) runtime.set(name, range);
      for (const [name, range] of Object.entries(devDependencies ?? {}))
        if (features.has(feature) || wiring.includes(name)) dev.set(name, range);
    }
  }
  const unknown = wiring.filter((name) => !runtime.has(name) && !dev.has(name));
  if (unknown.length > 0) {
    throw new BlocksError(
      "INVALID_REGISTRY",
      `The generated wiring imports ${unknown.join(", ")}, but no feature of ${blocks.map((block) => block.name).join(", ")} gives a version range for it.`,
      {
        suggestion: `Add ${unknown.join(", ")} to the dependencies of the feature it belongs to in block.json.`,
      },
    );
  }
  const usedFrameworks = frameworks.filter((framework) =>
    blocks.some((block) =>
      block.files.some((file) => file.framework === framework && files.some((planned) => planned.source === file.path)),
    ),
  );
  for (const framework of usedFrameworks) {
    for (const [name, range] of Object.entries(registry.frameworks[framework]?.devDependencies ?? {}))
      dev.set(name, range);
  }
  const missing = (entries: Map<string, string>) =>
    [...entries]
      .filter(([name]) => !declared.has(name))
      .map(([name, range]) => `${name}@${range}`)
      .sort();
  for (const name of runtime.keys()) dev.delete(name);
  return { dependencies: missing(runtime), devDependencies: missing(dev) };
}
