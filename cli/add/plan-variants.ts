// Which version of each variant file a block gets (setup/database.ts on the project's client, the cache or none, ...).
import type { VariantCondition } from "../registry/block-schema.js";
import { testOf } from "../registry/manifest.js";
import type { RegistryBlock } from "../registry/types.js";

/** One chosen variant: registry `path` copied to `target` (relative to the blocks folder, like a block file's). */
export type ChosenVariant = { path: string; target: string; test?: boolean; packages?: string[] };

/** What the conditions of block.json's `variants` are checked against. */
export type VariantContext = {
  features: ReadonlySet<string>;
  declared: ReadonlySet<string>;
  frameworks: readonly string[];
  /** Blocks the project has or is adding. */
  blocks: ReadonlySet<string>;
};

/**
 * The first choice whose conditions hold, per target; a choice recorded in the lock (`recorded`:
 * target -> registry path) stays as long as the registry still offers it and the features it was
 * chosen for still are, so `update` never swaps a user's client for another one because the
 * project's packages changed, while `add --client node-redis` on an ioredis project does swap it.
 * The test beside a chosen file comes along (unless `tests` is false).
 *
 * @example
 * chooseVariants(idempotency, { features: new Set(["postgres-store", "client-kysely"]), declared, frameworks: ["express"], blocks }, { tests: true });
 * // [{ path: "idempotency/setup/databases/kysely.ts", target: "idempotency/setup/database.ts" }, { path: ".../kysely.test.ts", target: ".../database.test.ts", test: true }, ...]
 */
export function chooseVariants(
  block: RegistryBlock,
  context: VariantContext,
  options: {
    tests: boolean;
    recorded?: Readonly<Record<string, string>> | undefined;
    hasFile(registryPath: string): boolean;
  },
): ChosenVariant[] {
  const chosen: ChosenVariant[] = [];
  for (const variant of block.variants ?? []) {
    const recorded = options.recorded?.[variant.target];
    const choice =
      variant.choices.find((candidate) => candidate.path === recorded && chosenFor(candidate.when, context)) ??
      variant.choices.find((candidate) => holds(candidate.when, context));
    if (!choice) continue;
    chosen.push({
      path: choice.path,
      target: variant.target,
      ...(choice.packages ? { packages: choice.packages } : {}),
    });
    const test = testOf(choice.path);
    if (options.tests && options.hasFile(test)) chosen.push({ path: test, target: testOf(variant.target), test: true });
  }
  return chosen;
}

/** The features a choice names are all chosen, and none it rules out is. */
function chosenFor(when: VariantCondition | undefined, context: VariantContext): boolean {
  return (
    (when?.features ?? []).every((name) => context.features.has(name)) &&
    (when?.without ?? []).every((name) => !context.features.has(name))
  );
}

function holds(when: VariantCondition | undefined, context: VariantContext): boolean {
  if (!when) return true;
  const all = (names: string[] | undefined, test: (name: string) => boolean) => (names ?? []).every(test);
  return (
    chosenFor(when, context) &&
    all(when.declared, (name) => context.declared.has(name)) &&
    all(when.undeclared, (name) => !context.declared.has(name)) &&
    all(when.blocks, (name) => context.blocks.has(name)) &&
    (when.frameworks === undefined || when.frameworks.some((name) => context.frameworks.includes(name)))
  );
}
