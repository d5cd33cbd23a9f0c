// Decides a block's optional features (Redis cache, Prometheus metrics): from flags, the project's packages, or a prompt.
import type { RegistryBlock } from "../registry/manifest.js";
import { BlocksError } from "../utils/errors.js";
import { canPrompt, decide } from "../utils/prompt.js";

/** `--cache redis|none`, `--metrics prometheus|none`: feature name -> the value given on the command line. */
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
  for (const block of blocks) {
    for (const [name, feature] of Object.entries(block.features ?? {})) {
      const flag = options.flags[name];
      const detected = (feature.detect ?? []).some((pkg) => declared.has(pkg));
      let on: boolean;
      if (flag !== undefined) {
        if (flag !== feature.choice && flag !== "none") {
          throw new BlocksError("INVALID_OPTION", `--${name} takes "${feature.choice}" or "none", not "${flag}".`, {
            suggestion: `Pass --${name} ${feature.choice} (${feature.description}) or --${name} none.`,
          });
        }
        on = flag === feature.choice;
      } else if (options.yes || options.dryRun || !canPrompt()) {
        on = detected;
      } else {
        const packages = Object.keys(feature.dependencies ?? {}).join(", ");
        on = await decide({ message: `${feature.description}? (installs ${packages})`, flag: `--${name} ${feature.choice}|none` }, false);
      }
      if (on) chosen.add(name);
    }
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
