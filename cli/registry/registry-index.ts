// registry.json, the index of a built registry (shadcn's shape): every item's name, description, packages and file targets, no content.
import { BlocksError } from "../utils/errors.js";
import { fetchRegistryJson } from "./fetch-item.js";
import { indexUrl, type NamedRegistry } from "./registries-config.js";
import type { RegistryItem } from "./registry-item.js";

export const INDEX_FILE = "registry.json";
export const INDEX_SCHEMA_URL = "https://ui.shadcn.com/schema/registry.json";

export type IndexItem = Omit<RegistryItem, "$schema" | "files" | "meta"> & {
  files: Array<{ path: string; type: "registry:file"; target: string }>;
};

export type RegistryIndex = { $schema: string; name: string; homepage: string; items: IndexItem[] };

/**
 * @example
 * buildIndex(items, { name: "acme", homepage: "https://r.acme.dev" }).items[0]; // { name: "audit-log", description, files: [{ path, type, target }] }
 */
export function buildIndex(items: RegistryItem[], header: { name: string; homepage: string }): RegistryIndex {
  return {
    $schema: INDEX_SCHEMA_URL,
    ...header,
    items: items.map(({ $schema: _schema, meta: _meta, files, ...rest }) => ({
      ...rest,
      files: files.map(({ content: _content, ...file }) => file),
    })),
  };
}

/** What search and view need of an index entry; anything else an index holds is ignored. */
export type IndexEntry = { name: string; title?: string; description?: string };

/**
 * Fetches a configured registry's index (with its headers) and keeps the well-formed entries.
 *
 * @example
 * (await readIndex({ name: "@acme", url: "https://r.acme.dev/{name}.json" })).map((entry) => entry.name); // ["audit-log", ...]
 */
export async function readIndex(registry: NamedRegistry): Promise<IndexEntry[]> {
  const index = (await fetchRegistryJson(registry, indexUrl(registry), "the index")) as { items?: unknown } | null;
  if (!Array.isArray(index?.items)) {
    throw new BlocksError(
      "INVALID_REGISTRY",
      `Registry ${registry.name}: its index ${indexUrl(registry)} has no "items" list.`,
      {
        suggestion:
          'Serve the registry.json `blocks registry build` writes, or set "index" for the registry in blocks.json.',
      },
    );
  }
  return (index.items as unknown[]).flatMap((entry) => {
    const { name, title, description } = (entry ?? {}) as Record<string, unknown>;
    if (typeof name !== "string") return [];
    return [
      {
        name,
        ...(typeof title === "string" ? { title } : {}),
        ...(typeof description === "string" ? { description } : {}),
      },
    ];
  });
}
