// Blocks as shadcn registry items: type "registry:item", every file "registry:file" with its content and a target.
//
// shadcn (4.x) installs such a "universal" item into any project, without components.json, when the
// item's type is registry:item and every file is a registry:file with a target; a target starting
// with "~/" lands at exactly that path under the project root (without it, shadcn may move "src/").
// It copies the files as they are: relative imports stay extensionless (fine under Bundler or
// CommonJS resolution; NodeNext projects should use `blocks add <item>`, which rewrites them).
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Registry, RegistryBlock, RegistryFile, RegistryMigration } from "./manifest.js";

export const ITEM_SCHEMA_URL = "https://ui.shadcn.com/schema/registry-item.json";

/** What `blocks add` needs back from an item that shadcn ignores: the block-relative path and tags of each file. */
export type BlocksMeta = {
  version: 1;
  dir: string;
  files: Array<Omit<RegistryFile, "path"> & { path: string }>;
  migration?: RegistryBlock["migration"];
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
  const defaults = Object.values(block.features ?? {}).filter((feature) => feature.default);
  const optional = new Set(Object.values(block.features ?? {}).filter((feature) => !feature.default).flatMap((feature) => feature.files ?? []));
  const files = block.files.filter(
    (file) => !optional.has(file.path) && (options.framework === undefined || file.framework === undefined || file.framework === options.framework),
  );
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
  const registryDependencies = (block.registryDependencies ?? []).map((dependency) =>
    options.baseUrl ? `${options.baseUrl.replace(/\/$/, "")}/${dependency}.json` : dependency,
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
        files: files.map((file) => ({ ...file, path: file.path.slice(block.name.length + 1) })),
        ...(block.migration ? { migration: itemMigration(block.migration) } : {}),
      },
    },
  };
}

/** The item's store is the default one, whose migration it always has: the feature that decided it is gone. */
function itemMigration(migration: RegistryMigration): RegistryMigration {
  const { feature, ...always } = migration;
  return feature === undefined ? migration : always;
}

/** shadcn takes "name@range" strings. */
function specs(packages: Record<string, string> | undefined): string[] {
  return Object.entries(packages ?? {}).map(([name, range]) => `${name}@${range}`);
}
