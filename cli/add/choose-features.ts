// Decides a block's optional features (Redis cache, Prometheus metrics): from flags, the project's packages, or a prompt.
import type { RegistryBlock } from "../registry/manifest.js";
import { BlocksError } from "../utils/errors.js";
import { canPrompt, decide } from "../utils/prompt.js";

/** `--cache redis|none`, `--store redis|dynamodb|postgres`, ...: flag name -> the value given on the command line. */
export type FeatureFlags = Record<string, string | undefined>;

/**
 * A flag decides; else `--yes`, `--dry-run` or no terminal take the default (on when the project
 * already declares one of the feature's `detect` packages); else the user is asked.
 *
 * @example
 * await chooseFeatures(blocks, new Set(["ioredis"]), { flags: {}, yes: true }); // Set { "cache" }
 */
export async function chooseFeatures(
  blocks: RegistryBlock[],
  declared: Set<string>,
  options: { flags: FeatureFlags; yes?: boolean | undefined; dryRun?: boolean | undefined },
): Promise<Set<string>> {
  const chosen = new Set<string>();
  const features = blocks.flatMap((block) => Object.entries(block.features ?? {}));
  for (const [name, feature] of features) {
    const flagName = feature.flag ?? name;
    const flag = options.flags[flagName];
    const detected = (feature.detect ?? []).some((pkg) => declared.has(pkg));
    let on: boolean;
    if (flag !== undefined) {
      // Features that share a flag (`--store redis|dynamodb`) each answer to their own value.
      const accepted = [...new Set([...features.filter(([n, f]) => (f.flag ?? n) === flagName).map(([, f]) => f.choice), feature.off ?? "none"])];
      if (!accepted.includes(flag)) {
        throw new BlocksError("INVALID_OPTION", `--${flagName} takes ${accepted.map((value) => `"${value}"`).join(", ")}, not "${flag}".`, {
          suggestion: `Pass --${flagName} ${feature.choice} (${feature.description}) or --${flagName} ${feature.off ?? "none"}.`,
        });
      }
      on = flag === feature.choice;
    } else if (feature.prompt === false || options.yes || options.dryRun || !canPrompt()) {
      on = detected;
    } else {
      const packages = Object.keys(feature.dependencies ?? {}).join(", ");
      on = await decide({ message: `${feature.description}? (installs ${packages})`, flag: `--${flagName} ${feature.choice}|${feature.off ?? "none"}` }, false);
    }
    if (on) chosen.add(name);
  }
  return chosen;
}

/**
 * Registry paths of files that belong to features left out: `add` skips them.
 *
 * @example
 * excludedFeatureFiles(blocks, new Set()); // Set { "idempotency/utils/prometheus-metrics.ts", ... }
 */
export function excludedFeatureFiles(blocks: RegistryBlock[], chosen: Set<string>): Set<string> {
  return new Set(
    blocks.flatMap((block) => Object.entries(block.features ?? {}).flatMap(([name, feature]) => (chosen.has(name) ? [] : (feature.files ?? [])))),
  );
}
