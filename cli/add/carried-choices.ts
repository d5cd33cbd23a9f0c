// A choice made for one block (`--store redis`) is the default for the blocks added after it.
import type { Lock } from "../config/lock-file.js";
import type { Registry, RegistryBlock } from "../registry/types.js";
import { recordedFeatures, type FeatureFlags } from "./choose-features.js";

export type CarriedChoice = { flag: string; value: string; from: string[] };

/**
 * Fills each shared flag the command line left out (`--store`, `--client`) with the one non-default
 * value the blocks already in the lock were added with, when the blocks being added offer it: a
 * Redis-only project's rate limiter gets its Redis store, and no PostgreSQL migration it would never
 * use. The lock is the record (the files of the chosen feature), so projects added earlier carry too.
 *
 * @example
 * carryChoices(registry, lock, [rateLimiter], {}); // { flags: { store: "redis" }, carried: [{ flag: "store", value: "redis", from: ["idempotency"] }] }
 */
export function carryChoices(
  registry: Registry,
  lock: Lock,
  blocks: RegistryBlock[],
  flags: FeatureFlags,
): { flags: FeatureFlags; carried: CarriedChoice[]; uncarried: CarriedChoice[] } {
  const offered = blocks
    .flatMap((block) => Object.values(block.features ?? {}))
    .filter((feature) => feature.flag !== undefined);
  const recorded = registry.blocks.flatMap((block) =>
    [...recordedFeatures(block, lock.blocks[block.name])].flatMap((name) => {
      const feature = block.features?.[name];
      return feature?.flag !== undefined && !feature.default
        ? [{ flag: feature.flag, value: feature.choice, block: block.name }]
        : [];
    }),
  );
  const result: FeatureFlags = { ...flags };
  const carried: CarriedChoice[] = [];
  // A store the blocks being added do not have (the rate limiter on MySQL): they keep their default, said aloud.
  const uncarried: CarriedChoice[] = [];
  for (const flag of new Set(offered.map((feature) => feature.flag as string))) {
    if (flags[flag] !== undefined) continue;
    const values = [...new Set(recorded.filter((entry) => entry.flag === flag).map((entry) => entry.value))];
    const [value] = values;
    // Two clients at once (drizzle and kysely) are no single answer to carry: detection decides as before.
    if (values.length !== 1 || value === undefined) continue;
    const from = recorded.filter((entry) => entry.flag === flag).map((entry) => entry.block);
    if (!offered.some((feature) => feature.flag === flag && feature.choice === value)) {
      if (flag === "store") uncarried.push({ flag, value, from });
      continue;
    }
    result[flag] = value;
    carried.push({ flag, value, from });
  }
  return { flags: result, carried, uncarried };
}
