// Projects set up before the wiring became block code: their src/idempotency-setup.ts holds the old inline wiring.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { chooseVariants, type VariantContext } from "../add/plan-variants.js";
import type { BlocksConfig } from "../config/blocks-config.js";
import type { LockedBlock } from "../config/lock-file.js";
import { variantSchema } from "../registry/block-schema.js";
import type { Registry, RegistryBlock } from "../registry/types.js";
import { BlocksError } from "../utils/errors.js";
import { insideProject, readIfExists } from "../utils/files.js";
import { wiringFingerprint } from "./wiring-fingerprint.js";

/** What an old wiring module says: whether `update` may replace it, and the choices it was written with. */
export type LegacySetup = {
  target: string;
  absolute: string;
  /** Unedited since an older `add` wrote it: replaced by the thin file that re-exports the block's wiring. */
  untouched: boolean;
  /** Features the old module wired that the lock cannot show (the Redis cache has no file of its own). */
  features: string[];
};

/**
 * The block's wiring module, when it predates the block's variants (the lock records none) and is
 * still where `add` put it; undefined otherwise.
 *
 * @example
 * await legacySetup(root, config, registry, block, lock.blocks.idempotency); // { target: "src/idempotency-setup.ts", untouched: true, features: ["cache"] }
 */
export async function legacySetup(
  root: string,
  config: BlocksConfig,
  registry: Registry,
  block: RegistryBlock,
  locked: LockedBlock,
): Promise<LegacySetup | undefined> {
  const legacy = block.setup?.legacy;
  if (!legacy || locked.variants !== undefined) return undefined;
  const target = path.posix.normalize(path.posix.join(config.dir, legacy.target));
  const absolute = insideProject(root, target);
  const text = await readIfExists(absolute);
  if (text === undefined) return undefined;
  const { fingerprints } = JSON.parse(await readFile(path.join(registry.root, legacy.fingerprints), "utf8")) as {
    fingerprints: Record<string, string>;
  };
  // Each choice is a feature's name, with the framework after a colon where it shaped the module ("metrics:express").
  const choices = fingerprints[wiringFingerprint(text, locked.table)]
    ?.split(" ")
    .map((choice) => choice.split(":")[0] ?? choice);
  // Edited: its choices are unknown; the cache is read from the project's packages, as `add --yes` would.
  return {
    target,
    absolute,
    untouched: choices !== undefined,
    features: (choices ?? []).filter((choice) => choice in (block.features ?? {})),
  };
}

/**
 * What the user must do with an edited old wiring module: said in the update's output and its --json.
 *
 * @example
 * legacyMessage("src/idempotency-setup.ts", "./blocks/idempotency/setup/index.js", "src/blocks/idempotency/setup");
 */
export function legacyMessage(target: string, content: string, setupDir: string): string {
  return (
    `${target} holds the wiring an older \`blocks add\` wrote, and you edited it, so it was left alone. The wiring is now block code ` +
    `that \`blocks update\` keeps up to date: ${setupDir}/ (added by this update: database.ts is your client, cache.ts, app-logger.ts, metrics.ts, ` +
    `index.ts composes them). Move your edits into those files, then replace the content of ${target} with:\n${content.trimEnd()}`
  );
}

/**
 * The versions of the block's variant files that stand for what an older `add` wrote inline, for a lock
 * from before the variants: the `variants` of the legacy file, in block.json's shape (the first choice
 * whose `when` holds), as `update` takes a choice recorded in the lock. Without them, today's choice for
 * the same features could be another client than the module was written for (MySqlStore's module was on
 * a mysql2 pool of its own even beside Drizzle or Kysely). Whether the module is untouched, edited or
 * gone, that add wrote the same: edits move into that version.
 *
 * @example
 * await legacyVariants(registry, block, locked, context); // { "idempotency/setup/database.ts": "idempotency/setup/database-mysql2.ts" }
 */
export async function legacyVariants(
  registry: Registry,
  block: RegistryBlock,
  locked: LockedBlock,
  context: VariantContext,
): Promise<Record<string, string> | undefined> {
  const legacy = block.setup?.legacy;
  if (!legacy || locked.variants !== undefined) return undefined;
  const file = path.join(registry.root, legacy.fingerprints);
  const parsed = z
    .object({ variants: z.array(variantSchema).default([]) })
    .safeParse(JSON.parse(await readFile(file, "utf8")));
  if (!parsed.success) {
    throw new BlocksError(
      "INVALID_REGISTRY",
      `${legacy.fingerprints}: "variants" must be a list like block.json's (${parsed.error.issues[0]?.message ?? "invalid"}).`,
      { suggestion: "Fix the block's legacy wiring file in the registry." },
    );
  }
  const chosen = chooseVariants({ ...block, variants: parsed.data.variants }, context, {
    tests: false,
    hasFile: () => false,
  });
  return Object.fromEntries(chosen.map((variant) => [variant.target, variant.path]));
}
