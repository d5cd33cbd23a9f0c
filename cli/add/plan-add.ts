// Everything `add` would do, computed without writing: files, packages and migrations.
import { existsSync } from "node:fs";
import path from "node:path";
import { readConfig, type BlocksConfig } from "../config/blocks-config.js";
import { readLock, type Lock } from "../config/lock-file.js";
import { blockTable, dialectStoreChoice } from "../migrate/block-store.js";
import { unsupportedLayout } from "../migrate/dialect-migration.js";
import { planMigrations, type MigrationPlan } from "../migrate/render-migration.js";
import { declaredPackages, readPackageJson } from "../project/package-json.js";
import { loadRegistry } from "../registry/manifest.js";
import { checkFrameworks, detectFrameworks, resolveBlocks } from "../registry/resolve.js";
import type { Registry, RegistryBlock } from "../registry/types.js";
import { projectFormatter } from "../format/project-formatter.js";
import { logger } from "../utils/logger.js";
import { choose } from "../utils/prompt.js";
import { carryChoices } from "./carried-choices.js";
import { checkRequiredVersions } from "./check-versions.js";
import { chooseFeatures, excludedFeatureFiles } from "./choose-features.js";
import { undetectedClientNotes } from "./undetected-client.js";
import { planBuild, type BuildPlan } from "./plan-build.js";
import { planDependencies, type DependencyPlan } from "./plan-dependencies.js";
import { planFiles, planSetupFiles, type PlannedFile } from "./plan-files.js";
import { chooseVariants } from "./plan-variants.js";

export type AddPlanOptions = {
  blocks: string[];
  cwd?: string;
  /** "express,hono" from the command line, or a list from code; "none" for the core only. */
  framework?: string | string[];
  tests?: boolean;
  table?: string;
  registry?: string;
  yes?: boolean;
  dryRun?: boolean;
  /** `--cache redis|none`: the Redis cache (installs ioredis). Default: on when the project declares ioredis. */
  cache?: string;
  /** `--metrics prometheus|none`: Prometheus metrics (installs prom-client). Default: on when the project declares prom-client. */
  metrics?: string;
  /** `--store postgres|redis|dynamodb|mysql|sqlite`: the one store copied, with its packages (and, for PostgreSQL only, the migration). Default: postgres. */
  store?: string;
  /** `--client pg|drizzle|kysely|postgres-js|prisma|typeorm|knex|none`: the database-client adapter to copy (`none` is pg). Default: the ones the project declares, else pg. */
  client?: string;
};

export type AddPlan = {
  root: string;
  config: BlocksConfig;
  registry: Registry;
  lock: Lock;
  blocks: RegistryBlock[];
  frameworks: string[];
  tests: boolean;
  /** Chosen optional features ("cache", "metrics"). */
  features: string[];
  files: PlannedFile[];
  dependencies: DependencyPlan;
  migrations: MigrationPlan[];
  /** Block name -> the table its store uses (`--table`, else the one recorded at an earlier `add`), for every block with one. */
  tables: Record<string, string>;
  /** What keeps the vendored tests out of the project's build output. */
  build: BuildPlan;
  /** Choices `add` made that the user should hear about (a library it has no adapter for, and what it used instead). */
  notes: string[];
};

/**
 * @example
 * const plan = await planAdd({ blocks: ["idempotency"], cwd: "/app", framework: ["express"] });
 */
export async function planAdd(options: AddPlanOptions): Promise<AddPlan> {
  const root = path.resolve(options.cwd ?? process.cwd());
  const pkg = await readPackageJson(root);
  const config = await readConfig(root);
  const registry = await loadRegistry(options.registry, { items: options.blocks, registries: config.registries });
  const lock = await readLock(root);
  const blocks = resolveBlocks(registry, options.blocks);
  const declared = declaredPackages(pkg);
  const frameworks = await chooseFrameworks(registry, blocks, declared, options);
  checkRequiredVersions({ root, registry, blocks, frameworks, pkg });
  const { flags, carried, uncarried } = carryChoices(registry, lock, blocks, {
    cache: options.cache,
    metrics: options.metrics,
    store: options.store,
    client: options.client,
  });
  // A project on MySQL or SQLite gets the store on its database, unless a flag or an earlier block chose one.
  const onDialect = flags.store === undefined ? dialectStoreChoice(blocks, config.database.dialect) : undefined;
  if (onDialect) {
    flags.store = onDialect;
    logger.info(
      `--store ${onDialect}: blocks.json's database is ${config.database.dialect} (pass --store to choose otherwise).`,
    );
  }
  for (const choice of carried)
    logger.info(
      `--${choice.flag} ${choice.value}: as ${choice.from.join(", ")} ${choice.from.length > 1 ? "were" : "was"} added (pass --${choice.flag} to choose otherwise).`,
    );
  for (const choice of uncarried) {
    const names = blocks.map((block) => block.name).join(", ");
    logger.warn(
      `--${choice.flag} ${choice.value}, as ${choice.from.join(", ")} ${choice.from.length > 1 ? "were" : "was"} added, is not offered by ${names}: ${blocks.length > 1 ? "they take their" : "it takes its"} default (pass --${choice.flag} to choose another).`,
    );
  }
  const features = await chooseFeatures(blocks, declared, { flags, yes: options.yes, dryRun: options.dryRun });
  const tests = options.tests !== false;
  const skip = excludedFeatureFiles(blocks, features);
  const tables = Object.fromEntries(
    blocks.filter((block) => block.migration).map((block) => [block.name, blockTable(block, lock, options.table)]),
  );
  // Each variant file's version, by what was chosen: the database client, the cache, the logger block, the framework's route.
  const present = new Set([...blocks.map((block) => block.name), ...Object.keys(lock.blocks)]);
  const context = { features, declared, frameworks, blocks: present };
  const variants = Object.fromEntries(
    blocks.map((block) => [
      block.name,
      chooseVariants(block, context, {
        tests,
        recorded: lock.blocks[block.name]?.variants,
        hasFile: (file) => existsSync(path.join(registry.root, file)),
      }),
    ]),
  );
  const vendored = await planFiles({
    root,
    config,
    registry,
    lock,
    blocks,
    selection: { frameworks, tests },
    skip,
    variants,
    tables,
  });
  const notes = options.client === undefined ? undetectedClientNotes(declared, features) : [];
  const setup: PlannedFile[] = [];
  for (const block of blocks.filter((candidate) => candidate.setup))
    setup.push(...(await planSetupFiles({ root, config, registry, block, planned: vendored })));
  const files = [...vendored, ...setup];
  // A version of a variant file may import more than its feature's own package (Kysely's database.ts opens a pg Pool).
  const wiringPackages = Object.values(variants).flatMap((chosen) =>
    chosen.flatMap((variant) => variant.packages ?? []),
  );
  const dependencies = planDependencies(registry, blocks, files, frameworks, declared, features, wiringPackages);
  // Planned together: several blocks in one `add` get migrations the project's tool runs in order.
  const migrations = planMigrations(
    blocks
      .filter(
        (block) => block.migration && (block.migration.feature === undefined || features.has(block.migration.feature)),
      )
      // Not into a folder whose tool runs on another database: `blocks migrate` says so, and how to take the SQL.
      .filter((block) => !unsupportedLayout(block.name, "postgresql", config.database))
      .map((block) => ({
        root,
        block: block.name,
        table: tables[block.name] ?? "",
        target: { layout: config.database.layout, migrations: config.database.migrations },
        lock,
      })),
  );
  const build = await formattedBuild(
    root,
    tests || setup.length ? await planBuild(root, pkg, config, files) : { kind: "none" as const, message: "" },
  );
  return {
    root,
    config,
    registry,
    lock,
    blocks,
    frameworks,
    tests,
    features: [...features].sort(),
    files,
    dependencies,
    migrations,
    tables,
    build,
    notes,
  };
}

/** `--framework` wins; else the frameworks the project declares; else ask, or core only with --yes. */
async function chooseFrameworks(
  registry: Registry,
  blocks: RegistryBlock[],
  declared: Set<string>,
  options: AddPlanOptions,
): Promise<string[]> {
  if (options.framework?.length) {
    const names = [options.framework]
      .flat()
      .flatMap((value) => value.split(","))
      .map((value) => value.trim())
      .filter(Boolean);
    return names.includes("none") ? [] : checkFrameworks(registry, names);
  }
  const detected = detectFrameworks(registry, declared);
  const offered = Object.keys(registry.frameworks).filter((name) =>
    blocks.some((block) => block.files.some((file) => file.framework === name)),
  );
  if (detected.length > 0 || offered.length === 0) return detected;
  if (options.yes || options.dryRun) {
    logger.warn(
      "No supported framework in package.json: adding the framework-independent core only (pass --framework to choose).",
    );
    return [];
  }
  return choose(
    `No supported framework found in package.json. Which adapters should be added?`,
    offered,
    "--framework <name> (or --yes for the core only)",
  );
}

/** The build's edits (tsconfig.build.json, package.json) as the project's own formatter writes them, as every vendored file is. */
async function formattedBuild(root: string, build: BuildPlan): Promise<BuildPlan> {
  if (build.kind !== "edit") return build;
  const formatter = await projectFormatter(root);
  if (!formatter) return build;
  const edits = await Promise.all(
    build.edits.map(async (edit) => ({
      ...edit,
      content: await formatter.format(path.join(root, edit.file), edit.content),
    })),
  );
  return { ...build, edits };
}
