// Blocks as shadcn registry items: type "registry:item", every file "registry:file" with its content and a target.
//
// shadcn (4.x) installs such a "universal" item into any project, without components.json, when the
// item's type is registry:item and every file is a registry:file with a target; a target starting
// with "~/" lands at exactly that path under the project root (without it, shadcn may move "src/").
// It copies the files as they are: relative imports stay extensionless (fine under Bundler or
// CommonJS resolution; NodeNext projects should use `blocks add <item>`, which rewrites them).
// `meta.blocks` is what `blocks add <item>` reads back, all of it data: the migration's SQL (never
// its schema module), and validate-item.ts checks every part of an item before it is used.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { chooseVariants } from "../add/plan-variants.js";
import { schemaOf } from "../migrate/schemas.js";
import { BlocksError } from "../utils/errors.js";
import type { Registry, RegistryBlock, RegistryFeature, RegistryFile, RegistryMigration } from "./types.js";

export const ITEM_SCHEMA_URL = "https://ui.shadcn.com/schema/registry-item.json";

/** What `blocks add` needs back from an item that shadcn ignores: the block-relative path and tags of each file. */
export type BlocksMeta = {
  version: 1;
  dir: string;
  files: Array<Omit<RegistryFile, "path"> & { path: string }>;
  /** The migration as data (its SQL, never its schema module): `blocks add <item>` runs no code of the item. */
  migration?: Omit<RegistryMigration, "schema" | "feature">;
};

export type RegistryItem = {
  $schema: string;
  name: string;
  type: "registry:item";
  title: string;
  description: string;
  dependencies?: string[];
  devDependencies?: string[];
  registryDependencies?: string[];
  files: Array<{ path: string; type: "registry:file"; content: string; target: string }>;
  meta: { blocks: BlocksMeta };
};

export type ItemOptions = {
  /** Project folder the files land in, as `blocks init` would pick it. */
  dir: string;
  /** Only the framework-independent files and this framework's (a slice for `npx shadcn add`). */
  framework?: string | undefined;
  /** Where the items will be served, so registryDependencies become URLs shadcn can fetch. */
  baseUrl?: string | undefined;
};

/**
 * @example
 * const item = await buildItem(registry, block, { dir: "src/blocks" });
 * item.files[0]; // { path: "registry/idempotency/README.md", type: "registry:file", content, target: "~/src/blocks/idempotency/README.md" }
 */
export async function buildItem(registry: Registry, block: RegistryBlock, options: ItemOptions): Promise<RegistryItem> {
  // An item offers no choices: the default store comes; the optional parts (metrics, other stores, client adapters) stay for `blocks add`, which asks.
  // A default of another store's flag (better-sqlite3, SQLite's default client) comes only with that store.
  const isDefault = (feature: RegistryFeature) =>
    feature.default === true && (feature.needs === undefined || block.features?.[feature.needs]?.default === true);
  const defaults = Object.values(block.features ?? {}).filter(isDefault);
  // A file an optional feature shares with a default one (the transaction guard) comes with the default.
  const kept = new Set(defaults.flatMap((feature) => feature.files ?? []));
  const optional = new Set(
    Object.values(block.features ?? {})
      .filter((feature) => !isDefault(feature))
      .flatMap((feature) => feature.files ?? [])
      .filter((file) => !kept.has(file)),
  );
  const files = block.files.filter(
    (file) =>
      !optional.has(file.path) &&
      (options.framework === undefined || file.framework === undefined || file.framework === options.framework),
  );
  // Each variant file as the defaults choose it, at its target: the item is then the block as `add` writes it by default.
  const variants = chooseVariants(
    block,
    {
      features: new Set(
        Object.entries(block.features ?? {})
          .filter(([, feature]) => isDefault(feature))
          .map(([name]) => name),
      ),
      declared: new Set(),
      frameworks: options.framework ? [options.framework] : [],
      blocks: new Set([block.name]),
    },
    { tests: true, hasFile: (file) => existsSync(path.join(registry.root, file)) },
  );
  for (const variant of variants)
    files.push({ path: variant.path, target: variant.target, ...(variant.test ? { test: true } : {}) });
  const itemFiles = [];
  for (const file of files) {
    itemFiles.push({
      path: `registry/${file.path}`,
      type: "registry:file" as const,
      content: await readFile(path.join(registry.root, file.path), "utf8"),
      target: `~/${path.posix.join(options.dir, file.target ?? file.path)}`,
    });
  }
  const name = options.framework ? `${block.name}-${options.framework}` : block.name;
  const dependencies = specs(Object.assign({}, block.dependencies, ...defaults.map((feature) => feature.dependencies)));
  const devDependencies = specs({
    ...block.devDependencies,
    ...Object.assign({}, ...defaults.map((feature) => feature.devDependencies)),
    ...(options.framework ? registry.frameworks[options.framework]?.devDependencies : {}),
  });
  // A shipped block another registry depends on keeps its bare name: it is not served at baseUrl.
  const registryDependencies = (block.registryDependencies ?? []).map((dependency) =>
    options.baseUrl && registry.blocks.some((other) => other.name === dependency)
      ? `${options.baseUrl.replace(/\/$/, "")}/${dependency}.json`
      : dependency,
  );
  return {
    $schema: ITEM_SCHEMA_URL,
    name,
    type: "registry:item",
    title: options.framework ? `${block.name} (${options.framework})` : block.name,
    description: block.description,
    ...(dependencies.length ? { dependencies } : {}),
    ...(devDependencies.length ? { devDependencies } : {}),
    ...(registryDependencies.length ? { registryDependencies } : {}),
    files: itemFiles,
    meta: {
      blocks: {
        version: 1,
        dir: options.dir,
        files: files.map(({ target, ...file }) => ({
          ...file,
          path: (target ?? file.path).slice(block.name.length + 1),
        })),
        ...(block.migration ? { migration: itemMigration(block, block.migration, files) } : {}),
      },
    },
  };
}

/**
 * The block's migration as the item carries it: the SQL the schema module renders, as data. The
 * feature that decided the store is gone (the item's store is the default one, whose migration it
 * always has), and a template must be one of the item's own files, as `blocks add` requires.
 */
function itemMigration(
  block: RegistryBlock,
  migration: RegistryMigration,
  files: RegistryFile[],
): NonNullable<BlocksMeta["migration"]> {
  const { schema: _schema, feature: _feature, sql: _sql, ...rest } = migration;
  for (const template of [migration.template, migration.nodePgMigrateTemplate]) {
    if (template !== undefined && !files.some((file) => file.path === template)) {
      throw new BlocksError(
        "INVALID_REGISTRY",
        `Block "${block.name}": its migration template ${template} is not one of the item's files, so the item could not carry it.`,
        {
          suggestion: `Move the template into registry/${block.name}/ (a file of the block), or leave it out for the CLI's own.`,
        },
      );
    }
  }
  return { ...rest, sql: schemaOf(block.name).sql };
}

/** shadcn takes "name@range" strings. */
function specs(packages: Record<string, string> | undefined): string[] {
  return Object.entries(packages ?? {}).map(([name, range]) => `${name}@${range}`);
}
