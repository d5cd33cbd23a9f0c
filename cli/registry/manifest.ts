// The registry: registry.json (frameworks) plus one `<block>/block.json` per block, files derived from the folder.
//
// registry/registry.json: { "version": 1, "frameworks": { "<name>": { "packages": [...], "devDependencies"?: {...} } } }
//   (a legacy "blocks" array of full block entries, with "files", is still read, for registries not yet converted).
// registry/<block>/block.json, every path relative to the registry folder:
//   name, description                       required
//   dependencies, devDependencies           { package: range }: what the vendored runtime code / its tests import
//   registryDependencies                    other blocks added first
//   templates                               [{ template: "../templates/...", target: "../jobs/x.ts", framework? }]
//   migration                               { table, schema: "<block>/<module>-schema.ts", title?, template?, nodePgMigrateTemplate?, feature? }
//                                           the schema module imports nothing and exports schemaStatements(table?),
//                                           dropStatements(table), schemaTables(table) and checkTableName(table);
//                                           or, instead of "schema", "sql": the same as data (see migrate/migration-sql.ts)
//   files                                   optional; derived from the folder when absent (see derive-files.ts)
//   features                                { name: RegistryFeature }: optional parts chosen at `add` (see RegistryFeature in types.ts)
//   setup, doctor                           the wiring `add` copies; the names `doctor` checks (block-schema.ts)
// Nothing else: block-schema.ts checks every declaration when the registry loads, naming each problem.
import { existsSync, readdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { migrationSqlProblem } from "../migrate/migration-sql.js";
import { BlocksError } from "../utils/errors.js";
import { packageRoot } from "../utils/package-root.js";
import { blockDeclarationSchema, declarationProblems } from "./block-schema.js";
import { DECLARATION_FILE, deriveFiles } from "./derive-files.js";
import type { RegistryConfig } from "./registries-config.js";
import { isRegistryAddress } from "./resolve-dependencies.js";
import type { Registry, RegistryBlock } from "./types.js";

/**
 * The registry that ships with the CLI.
 *
 * @example
 * await loadRegistry(defaultRegistryDir());
 */
export function defaultRegistryDir(): string {
  return path.join(packageRoot(), "registry");
}

/**
 * Loads the registry; arguments of `blocks add` that are registry-item files or URLs become blocks too.
 *
 * @example
 * const registry = await loadRegistry(); // or loadRegistry("/path/to/other/registry")
 * registry.blocks.map((block) => block.name); // ["idempotency", "logger"]
 * await loadRegistry(undefined, { items: ["./idempotency.json"] }); // + the block in that item
 */
export async function loadRegistry(
  dir = defaultRegistryDir(),
  options: { items?: string[] | undefined; registries?: Record<string, RegistryConfig> | undefined } = {},
): Promise<Registry> {
  const root = path.resolve(dir);
  const raw = await readJson(path.join(root, "registry.json"));
  const registry = await readRegistry(raw, root);
  const { loadSchemas } = await import("../migrate/schemas.js");
  await loadSchemas(registry);
  const items = (options.items ?? []).filter(isItemSource);
  if (items.length === 0) return registry;
  const { addItems } = await import("./registry-item-source.js");
  return addItems(registry, items, options.registries);
}

/**
 * Whether an argument of `blocks add` names a registry item (a `.json` file or an http(s) URL) rather than a block.
 *
 * @example
 * isItemSource("./out/idempotency.json"); // true
 * isItemSource("@acme/audit-log"); // true: an item of a registry configured in blocks.json
 */
export function isItemSource(argument: string): boolean {
  return /^https?:\/\//.test(argument) || argument.endsWith(".json") || isRegistryAddress(argument);
}

async function readJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, "utf8"));
  } catch (cause) {
    throw invalid(`Cannot read ${file}.`, cause);
  }
}

/** registry.json's header, then every block: legacy entries first, then each folder with a block.json. */
async function readRegistry(raw: unknown, root: string): Promise<Registry> {
  const manifest = raw as Partial<Registry> | null;
  if (manifest?.version !== 1 || typeof manifest.frameworks !== "object" || manifest.frameworks === null) {
    throw invalid('registry.json needs "version": 1 and a "frameworks" object.');
  }
  const registry: Registry = { version: 1, root, frameworks: manifest.frameworks, blocks: [] };
  const folders = readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(root, entry.name, DECLARATION_FILE)))
    .map((entry) => entry.name)
    .sort();
  const blocks = [...(Array.isArray(manifest.blocks) ? manifest.blocks : [])];
  for (const folder of folders) blocks.push(await readDeclaration(registry, folder));
  for (const block of blocks) {
    checkBlock(registry, block);
    if (registry.blocks.some((other) => other.name === block.name))
      throw invalid(`Two blocks are named "${block.name}".`);
    registry.blocks.push(block);
  }
  return registry;
}

async function readDeclaration(registry: Registry, folder: string): Promise<RegistryBlock> {
  const file = path.join(registry.root, folder, DECLARATION_FILE);
  const raw = (await readJson(file)) as Partial<RegistryBlock> | null;
  if (typeof raw?.name !== "string" || typeof raw.description !== "string") {
    throw invalid(`${file} needs a "name" and a "description".`);
  }
  const problems = declarationProblems(raw);
  if (problems.length) throw invalid(`${file} is not a valid block declaration: ${problems.join("; ")}.`);
  const declaration = blockDeclarationSchema.parse(raw) as Partial<RegistryBlock> & {
    name: string;
    description: string;
  };
  if (declaration.name !== folder)
    throw invalid(`${file} names the block "${declaration.name}"; it must match its folder "${folder}".`);
  // Variants, their stand-ins and the wiring the user owns are copied by their own rules, not as block files.
  const apart = new Set([
    ...(declaration.variants ?? []).flatMap((entry) => [
      entry.target,
      ...entry.choices.flatMap((choice) => [choice.path, testOf(choice.path)]),
    ]),
    ...(declaration.setup?.files ?? []).map((file) => file.path),
    ...(declaration.setup?.legacy ? [declaration.setup.legacy.fingerprints] : []),
  ]);
  const files =
    declaration.files ??
    deriveFiles(registry.root, folder, Object.keys(registry.frameworks)).filter((file) => !apart.has(file.path));
  return { ...declaration, name: declaration.name, description: declaration.description, files };
}

function checkBlock(registry: Registry, block: RegistryBlock): void {
  const { root, frameworks } = registry;
  if (typeof block?.name !== "string" || !Array.isArray(block.files))
    throw invalid(`Every block needs a "name" and a "files" array.`);
  for (const file of block.files) {
    if (typeof file?.path !== "string") throw invalid(`Block "${block.name}" lists a file without a "path".`);
    if (file.framework !== undefined && !(file.framework in frameworks)) {
      throw invalid(`Block "${block.name}": ${file.path} names the unknown framework "${file.framework}".`);
    }
    within(root, path.resolve(root, file.path), block.name);
  }
  for (const template of block.templates ?? []) {
    if (typeof template?.template !== "string" || typeof template.target !== "string") {
      throw invalid(`Block "${block.name}": every template needs "template" and "target".`);
    }
    within(path.dirname(root), path.resolve(root, template.template), block.name);
  }
  for (const entry of block.variants ?? []) {
    insideBlocks(entry.target, block.name);
    for (const choice of entry.choices) within(root, path.resolve(root, choice.path), block.name);
  }
  for (const file of block.setup?.files ?? []) within(root, path.resolve(root, file.path), block.name);
  const migration = block.migration;
  for (const source of [migration?.schema, migration?.template, migration?.nodePgMigrateTemplate]) {
    if (source !== undefined) within(path.dirname(root), path.resolve(root, source), block.name);
  }
  if (migration && typeof migration.table !== "string")
    throw invalid(`Block "${block.name}": "migration" needs a default "table".`);
  const sqlProblem = migration?.sql === undefined ? undefined : migrationSqlProblem(migration.sql);
  if (sqlProblem) throw invalid(`Block "${block.name}": in "migration", ${sqlProblem}.`);
}

/**
 * The test that comes with a registry file: `<stem>.test.ts` beside it.
 *
 * @example
 * testOf("idempotency/setup/databases/pg.ts"); // "idempotency/setup/databases/pg.test.ts"
 */
export function testOf(file: string): string {
  return file.replace(/\.([cm]?[jt]sx?)$/, ".test.$1");
}

/** Sources stay inside the registry (templates: inside its package): a manifest cannot make the CLI read arbitrary files. */
function within(folder: string, absolute: string, block: string): void {
  const rel = path.relative(folder, absolute);
  if (rel.startsWith("..") || path.isAbsolute(rel))
    throw invalid(`Block "${block}": ${absolute} is outside ${folder}.`);
}

/** A target lands in the blocks folder: relative, and never above it. */
export function insideBlocks(target: string, block: string): void {
  const normalized = path.posix.normalize(target.replace(/\\/g, "/"));
  if (
    path.posix.isAbsolute(normalized) ||
    normalized === ".." ||
    normalized.startsWith("../") ||
    /^[A-Za-z]:/.test(target)
  ) {
    throw invalid(`Block "${block}": the target ${target} is outside the blocks folder.`);
  }
}

function invalid(message: string, cause?: unknown): BlocksError {
  return new BlocksError("INVALID_REGISTRY", message, {
    cause,
    suggestion: "Fix registry.json or the block's block.json (or the folder given to --registry).",
  });
}
