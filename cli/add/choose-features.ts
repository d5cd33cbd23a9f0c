// Decides a block's optional features (store, Redis cache, Prometheus metrics): from flags, the project's packages, or a prompt.
import type { LockedBlock } from "../config/lock-file.js";
import type { RegistryBlock, RegistryFeature } from "../registry/types.js";
import { BlocksError } from "../utils/errors.js";
import { canPrompt, decide } from "../utils/prompt.js";

/** `--cache redis|none`, `--store redis|dynamodb|postgres`, ...: flag name -> the value given on the command line. */
export type FeatureFlags = Record<string, string | undefined>;

/**
 * A flag decides; else `--yes`, `--dry-run` or no terminal take the default (on when the project
 * already declares one of the feature's `detect` packages); else the user is asked. A `default`
 * feature (PostgresStore, the pg client) is on unless another feature of its flag is; a feature that
 * `needs` another (a PostgreSQL client) is off without it, and one `without` another (the Redis cache
 * beside RedisStore) off with it: each an error when its own flag asked for it.
 *
 * @example
 * await chooseFeatures(blocks, new Set(["ioredis"]), { flags: {}, yes: true }); // Set { "cache", "postgres-store", "client-pg" }
 */
export async function chooseFeatures(
  blocks: RegistryBlock[],
  declared: Set<string>,
  options: { flags: FeatureFlags; yes?: boolean | undefined; dryRun?: boolean | undefined },
): Promise<Set<string>> {
  const chosen = new Set<string>();
  const features = blocks.flatMap((block) => Object.entries(block.features ?? {}));
  const flagOf = ([name, feature]: [string, RegistryFeature]) => feature.flag ?? name;
  for (const entry of features) {
    const [name, feature] = entry;
    const flagName = flagOf(entry);
    const flag = options.flags[flagName];
    const detected = (feature.detect ?? []).some((pkg) => declared.has(pkg));
    let on: boolean;
    if (flag !== undefined) {
      // Features that share a flag (`--store redis|dynamodb|postgres`) each answer to their own value.
      const group = features.filter((other) => flagOf(other) === flagName);
      const offs = group.filter(([, f]) => !f.default).map(([, f]) => f.off ?? "none");
      const accepted = [...new Set([...group.map(([, f]) => f.choice), ...offs])];
      if (!accepted.includes(flag)) {
        throw new BlocksError(
          "INVALID_OPTION",
          `--${flagName} takes ${accepted.map((value) => `"${value}"`).join(", ")}, not "${flag}".`,
          {
            suggestion: `Pass --${flagName} ${feature.choice} (${feature.description})${feature.default ? "" : ` or --${flagName} ${feature.off ?? "none"}`}.`,
          },
        );
      }
      on = flag === feature.choice;
    } else if (feature.default) {
      continue;
    } else if (feature.prompt === false || options.yes || options.dryRun || !canPrompt()) {
      on = detected;
    } else {
      const packages = Object.keys(feature.dependencies ?? {}).join(", ");
      on = await decide(
        {
          message: `${feature.description}? (installs ${packages})`,
          flag: `--${flagName} ${feature.choice}|${feature.off ?? "none"}`,
          // Enter takes what --yes takes: on only when the project already has the feature's package.
          yesAnswer: detected,
        },
        false,
      );
    }
    if (on) chosen.add(name);
  }
  // `--client none` chooses no other client, so the default one (pg) is on, as it is with no flag.
  // Defaults of a store come first; a client's default is for its own store, so it is settled once the
  // clients of the other stores (a detected Drizzle on `--store sqlite`) have been dropped.
  addDefaults(features, chosen, false);
  // A feature whose store is not chosen (a PostgreSQL client on `--store redis`), or that does not go with one that
  // is (the Redis cache beside RedisStore), is dropped; asked for by its own flag, that is an error naming both.
  for (const entry of features) {
    const [name, feature] = entry;
    if (!chosen.has(name)) continue;
    const needed = features.find(([other]) => other === feature.needs && !chosen.has(other));
    const beside = features.find(([other]) => chosen.has(other) && feature.without?.includes(other));
    const conflict = needed ?? beside;
    if (!conflict) continue;
    chosen.delete(name);
    if (options.flags[flagOf(entry)] !== feature.choice) continue;
    const [flag, other] = [flagOf(entry), flagOf(conflict)];
    throw new BlocksError(
      "INVALID_OPTION",
      needed
        ? `--${flag} ${feature.choice} needs --${other} ${needed[1].choice}: ${feature.description}.`
        : `--${flag} ${feature.choice} (${feature.description}) does not go with --${other} ${conflict[1].choice} (${conflict[1].description}).`,
      {
        suggestion: needed
          ? `Leave --${flag} out, or pass --${other} ${needed[1].choice}.`
          : `Leave --${flag} out, or pass another --${other}.`,
      },
    );
  }
  addDefaults(features, chosen, true);
  return chosen;
}

/**
 * Adds to `chosen` each default feature (`withNeeds`: of those that need another, a store's client)
 * whose flag has no chosen feature yet, and whose needed feature is chosen.
 */
function addDefaults(features: Array<[string, RegistryFeature]>, chosen: Set<string>, withNeeds: boolean): void {
  const flagOf = ([name, feature]: [string, RegistryFeature]) => feature.flag ?? name;
  for (const entry of features) {
    const [name, feature] = entry;
    if (!feature.default || (feature.needs !== undefined) !== withNeeds) continue;
    if (feature.needs !== undefined && !chosen.has(feature.needs)) continue;
    if (!features.some((other) => flagOf(other) === flagOf(entry) && chosen.has(other[0]))) chosen.add(name);
  }
}

/**
 * The features a block was added with, as its lock entry shows them: those with a file recorded, those
 * a recorded variant was chosen for (a Redis client has no file of its own: its setup/database.ts says
 * which), and a recorded store's default client when nothing names one (a lock from before the Redis
 * clients were features). A feature with none of these, such as the Redis cache of a lock from before
 * the variants, leaves no trace and has nothing to keep in step.
 *
 * @example
 * recordedFeatures(block, lock.blocks.idempotency); // Set { "redis-store", "client-node-redis", "metrics" }
 */
export function recordedFeatures(block: RegistryBlock, locked: LockedBlock | undefined): Set<string> {
  const recorded = featuresWithFiles(block, locked);
  for (const variant of block.variants ?? []) {
    const path = locked?.variants?.[variant.target];
    const choice = variant.choices.find((candidate) => candidate.path === path);
    for (const name of choice?.when?.features ?? []) if (block.features?.[name]) recorded.add(name);
  }
  if (locked) addDefaults(Object.entries(block.features ?? {}), recorded, true);
  return recorded;
}

function featuresWithFiles(block: RegistryBlock, locked: LockedBlock | undefined): Set<string> {
  const recorded = Object.keys(locked?.files ?? {});
  const features = Object.entries(block.features ?? {});
  // A file two features share (a helper of two stores) says which of them was chosen only together with one of its own.
  const owners = new Map<string, number>();
  for (const [, feature] of features)
    for (const file of feature.files ?? []) owners.set(file, (owners.get(file) ?? 0) + 1);
  return new Set(
    features
      .filter(([, feature]) => {
        const files = feature.files ?? [];
        const own = files.filter((file) => owners.get(file) === 1);
        return (own.length ? own : files).some((file) => recorded.some((target) => target.endsWith(`/${file}`)));
      })
      .map(([name]) => name),
  );
}

/**
 * Registry paths of files that belong to features left out, and to no chosen one: `add` skips them.
 *
 * @example
 * excludedFeatureFiles(blocks, new Set()); // Set { "idempotency/utils/prometheus-metrics.ts", ... }
 */
export function excludedFeatureFiles(blocks: RegistryBlock[], chosen: Set<string>): Set<string> {
  const features = blocks.flatMap((block) => Object.entries(block.features ?? {}));
  // A file two features share (a helper of two stores) stays when either is chosen.
  const kept = new Set(features.flatMap(([name, feature]) => (chosen.has(name) ? (feature.files ?? []) : [])));
  return new Set(
    features
      .flatMap(([name, feature]) => (chosen.has(name) ? [] : (feature.files ?? [])))
      .filter((file) => !kept.has(file)),
  );
}
