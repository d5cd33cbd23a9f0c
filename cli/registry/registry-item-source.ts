// `blocks add <file-or-url>`: reads a registry item (as `blocks registry build` writes it) and makes it a block.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { isInsideFolder } from "../config/module-specifier.js";
import { BlocksError } from "../utils/errors.js";
import { tagFile } from "./derive-files.js";
import type { Registry, RegistryBlock } from "./manifest.js";
import type { RegistryConfig } from "./registries-config.js";
import type { BlocksMeta } from "./registry-item.js";
import { resolveItemSources } from "./resolve-dependencies.js";

type ItemFile = { path?: unknown; type?: unknown; content?: unknown; target?: unknown };
type Item = { name?: unknown; type?: unknown; description?: unknown; dependencies?: unknown; devDependencies?: unknown; registryDependencies?: unknown; files?: unknown; meta?: { blocks?: BlocksMeta } };

/**
 * Loads each item, writes its files to a private temporary folder, and returns the registry with
 * those blocks (replacing a registry block of the same name) and `sources` mapping each argument to it.
 *
 * @example
 * const registry = await addItems(await loadRegistry(), ["http://127.0.0.1:8080/r/idempotency.json"]);
 */
export async function addItems(registry: Registry, sources: string[], registries: Record<string, RegistryConfig> = {}): Promise<Registry> {
  const blocks = [...registry.blocks];
  const mapping: Record<string, string> = { ...registry.sources };
  // A registry folder of its own: the items' blocks as files, the other blocks and the templates as
  // links to the shipped ones, so every registry path (and `@/blocks/...` import) means what it always does.
  const folder = mkdtempSync(path.join(tmpdir(), "blocks-item-"));
  process.once("exit", () => rmSync(folder, { recursive: true, force: true }));
  const root = path.join(folder, "registry");
  mkdirSync(root);
  symlinkSync(path.join(path.dirname(registry.root), "templates"), path.join(folder, "templates"));
  // Each item once, its registryDependencies first; every fetched item goes through the same checks below.
  const items = await resolveItemSources(sources, { registries, builtIn: new Set(registry.blocks.map((block) => block.name)), read: readItem });
  const replaced = new Set(items.map(({ item }) => (item as Item).name));
  for (const entry of readdirSync(registry.root)) {
    if (!replaced.has(entry)) symlinkSync(path.join(registry.root, entry), path.join(root, entry));
  }
  for (const { source, specs, item, origin } of items) {
    const block = materialize({ ...registry, root }, item as Item, source);
    if (origin) block.origin = origin;
    const at = blocks.findIndex((candidate) => candidate.name === block.name);
    if (at >= 0) blocks.splice(at, 1, block);
    else blocks.push(block);
    for (const spec of specs) mapping[spec] = block.name;
  }
  const next: Registry = { ...registry, root, blocks, sources: mapping };
  const { loadSchemas } = await import("../migrate/schemas.js");
  await loadSchemas({ ...next, blocks: blocks.filter((block) => Object.values(mapping).includes(block.name)) });
  return next;
}

async function readItem(source: string): Promise<Item> {
  let text: string;
  try {
    if (/^https?:\/\//.test(source)) {
      const response = await fetch(source, { signal: AbortSignal.timeout(30_000) });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      text = await response.text();
    } else {
      text = await readFile(path.resolve(source), "utf8");
    }
    return JSON.parse(text) as Item;
  } catch (cause) {
    throw invalid(source, "cannot be read as JSON", cause);
  }
}

function materialize(registry: Registry, item: Item, source: string): RegistryBlock {
  if (item.type !== "registry:item" || typeof item.name !== "string" || !/^[a-z0-9][a-z0-9-]*$/.test(item.name) || !Array.isArray(item.files)) {
    throw invalid(source, 'is not a registry item: it needs "type": "registry:item", a lower-case "name" and "files"');
  }
  const name = item.name;
  const meta = item.meta?.blocks;
  const frameworks = Object.keys(registry.frameworks);
  const files = (item.files as ItemFile[]).map((file) => {
    if (typeof file.content !== "string" || typeof file.target !== "string") throw invalid(source, "has a file without content or target");
    if (!isInsideFolder(file.target.replace(/^~\//, ""))) throw invalid(source, `has the target ${JSON.stringify(file.target)}, which leads outside the project`);
    const relative = blockPath(name, file.target, meta?.dir);
    if (!isInsideFolder(relative)) throw invalid(source, `has the target ${JSON.stringify(file.target)}, which leads outside the project`);
    const absolute = path.join(registry.root, name, relative);
    mkdirSync(path.dirname(absolute), { recursive: true });
    writeFileSync(absolute, file.content);
    return tagFile(`${name}/${relative}`, frameworks);
  });
  const schema = meta?.migration?.schema;
  const migration = schema && isInsideFolder(schema) && schema.startsWith(`${name}/`) ? meta.migration : undefined;
  return {
    name,
    description: typeof item.description === "string" ? item.description : `${name} (from ${source})`,
    dependencies: packages(item.dependencies),
    devDependencies: packages(item.devDependencies),
    registryDependencies: Array.isArray(item.registryDependencies) ? (item.registryDependencies as string[]).filter((dependency) => dependency !== name) : [],
    files,
    ...(migration ? { migration } : {}),
  };
}

/** "~/src/blocks/idempotency/http/index.ts" -> "http/index.ts": the path inside the block, wherever the item aimed it. */
function blockPath(name: string, target: string, dir: string | undefined): string {
  if (path.isAbsolute(target) || /^[A-Za-z]:/.test(target)) return "/";
  const bare = target.replace(/^~\//, "");
  const prefix = dir ? `${dir}/${name}/` : undefined;
  if (prefix && bare.startsWith(prefix)) return bare.slice(prefix.length);
  const at = bare.indexOf(`${name}/`);
  return at === 0 || bare[at - 1] === "/" ? bare.slice(at + name.length + 1) : path.posix.basename(bare);
}

/** shadcn's "name@range" strings (a scoped name keeps its leading "@") back to a map. */
function packages(list: unknown): Record<string, string> {
  const entries = (Array.isArray(list) ? list : []).filter((spec): spec is string => typeof spec === "string").map((spec) => {
    const at = spec.lastIndexOf("@");
    return at > 0 ? [spec.slice(0, at), spec.slice(at + 1)] : [spec, "latest"];
  });
  return Object.fromEntries(entries);
}

function invalid(source: string, why: string, cause?: unknown): BlocksError {
  return new BlocksError("INVALID_REGISTRY", `The registry item ${source} ${why}.`, {
    cause,
    suggestion: "Give `blocks add` an item written by `blocks registry build` (a .json file or an http(s) URL).",
  });
}
