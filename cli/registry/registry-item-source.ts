// `blocks add <file-or-url>`: reads a registry item (as `blocks registry build` writes it) and makes it a block.
import { AsyncLocalStorage } from "node:async_hooks";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { BlocksError } from "../utils/errors.js";
import { tagFile } from "./derive-files.js";
import type { RegistryConfig } from "./registries-config.js";
import { resolveItemSources, withOrigins } from "./resolve-dependencies.js";
import type { Registry, RegistryBlock } from "./types.js";
import { validateItem, type ValidItem } from "./validate-item.js";

/**
 * Loads and validates each item (files, URLs, `@registry/name` of `registries`) and the items they
 * depend on, then adds them as blocks (see `registryWithItems`).
 *
 * @example
 * const registry = await addItems(await loadRegistry(), ["http://127.0.0.1:8080/r/idempotency.json"]);
 * await addItems(registry, ["@acme/audit-log"], config.registries); // + @acme's tenant-guard it depends on
 */
export async function addItems(
  registry: Registry,
  sources: string[],
  registries: Record<string, RegistryConfig> = {},
): Promise<Registry> {
  // Each item once, its registryDependencies first (from configured registries too), every one validated alike.
  const resolved = await resolveItemSources(sources, {
    registries,
    builtIn: new Set(registry.blocks.map((block) => block.name)),
    read: readItem,
  });
  const next = await registryWithItems(
    registry,
    resolved.map(({ source, item }) => ({ source, item: validateItem(item, source) })),
  );
  return withOrigins(next, resolved);
}

/**
 * Writes each validated item's files to a private temporary folder and returns the registry with
 * those blocks (replacing a registry block of the same name) and `sources` mapping each source to it.
 * Nothing of an item is run: its migration is data. Items fetched some other way (a private registry)
 * come here once `validateItem` accepted them.
 *
 * @example
 * const registry = await registryWithItems(await loadRegistry(), [{ source: url, item: validateItem(json, url) }]);
 */
export async function registryWithItems(
  registry: Registry,
  items: Array<{ source: string; item: ValidItem }>,
): Promise<Registry> {
  const names = items.map(({ item }) => item.name);
  const twice = names.find((name, at) => names.indexOf(name) !== at);
  if (twice !== undefined) {
    const sources = items.filter(({ item }) => item.name === twice).map(({ source }) => source);
    throw new BlocksError("INVALID_REGISTRY", `Two registry items are named "${twice}": ${sources.join(", ")}.`, {
      suggestion: "Add one of them at a time.",
    });
  }
  const replaced = new Set(names);
  const blocks = [...registry.blocks];
  const mapping: Record<string, string> = { ...registry.sources };
  // A registry folder of its own: the items' blocks as files, the other blocks and the templates as
  // links to the shipped ones, so every registry path (and `@/blocks/...` import) means what it always does.
  const folder = itemFolder();
  const root = path.join(folder, "registry");
  mkdirSync(root);
  symlinkSync(path.join(path.dirname(registry.root), "templates"), path.join(folder, "templates"));
  for (const entry of readdirSync(registry.root)) {
    if (!replaced.has(entry)) symlinkSync(path.join(registry.root, entry), path.join(root, entry));
  }
  for (const { source, item } of items) {
    const block = materialize({ ...registry, root }, item, source);
    const at = blocks.findIndex((candidate) => candidate.name === block.name);
    if (at >= 0) blocks.splice(at, 1, block);
    else blocks.push(block);
    mapping[source] = block.name;
  }
  const next: Registry = { ...registry, root, blocks, sources: mapping };
  const { loadSchemas } = await import("../migrate/schemas.js");
  await loadSchemas({ ...next, blocks: blocks.filter((block) => replaced.has(block.name)) });
  return next;
}

/** Every item folder still on disk: removed at exit if no scope removed it first. */
const itemFolders = new Set<string>();
/** The folders made inside one `withItemFolders` call, so that call removes exactly its own. */
const scope = new AsyncLocalStorage<Set<string>>();

function itemFolder(): string {
  if (itemFolders.size === 0 && process.listeners("exit").every((listener) => listener !== removeAll))
    process.once("exit", removeAll);
  const folder = mkdtempSync(path.join(tmpdir(), "blocks-item-"));
  itemFolders.add(folder);
  scope.getStore()?.add(folder);
  return folder;
}

/**
 * Runs `work` and then removes the item folders the registries it loaded were written to, whether it
 * resolved or threw: the lifetime of one command run inside a long-lived process (a `blocks mcp`
 * tool call). Calls may overlap; each removes only its own. A one-shot CLI command needs none: its
 * folders go when the process exits.
 *
 * @example
 * const view = await withItemFolders(() => runView({ name: "@acme/audit-log", cwd }));
 */
export async function withItemFolders<T>(work: () => Promise<T>): Promise<T> {
  const own = new Set<string>();
  try {
    return await scope.run(own, work);
  } finally {
    for (const folder of own) remove(folder);
  }
}

function remove(folder: string): void {
  rmSync(folder, { recursive: true, force: true });
  itemFolders.delete(folder);
}

function removeAll(): void {
  for (const folder of itemFolders) remove(folder);
}

async function readItem(source: string): Promise<unknown> {
  let text: string;
  try {
    if (/^https?:\/\//.test(source)) {
      const response = await fetch(source, { signal: AbortSignal.timeout(30_000) });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      text = await response.text();
    } else {
      text = await readFile(path.resolve(source), "utf8");
    }
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw new BlocksError("INVALID_REGISTRY", `The registry item ${source} cannot be read as JSON.`, {
      cause,
      suggestion: "Give `blocks add` an item written by `blocks registry build` (a .json file or an http(s) URL).",
    });
  }
}

/** The item's files as text under `<root>/<name>/`, a folder the CLI just created and nothing else writes to. */
function materialize(registry: Registry, item: ValidItem, source: string): RegistryBlock {
  const frameworks = Object.keys(registry.frameworks);
  const files = item.files.map((file) => {
    const absolute = path.join(registry.root, item.name, file.path);
    mkdirSync(path.dirname(absolute), { recursive: true });
    writeFileSync(absolute, file.content);
    return tagFile(`${item.name}/${file.path}`, frameworks);
  });
  return {
    name: item.name,
    description: item.description ?? `${item.name} (from ${source})`,
    dependencies: item.dependencies,
    devDependencies: item.devDependencies,
    registryDependencies: item.registryDependencies,
    files,
    ...(item.migration ? { migration: item.migration } : {}),
  };
}
