// Reads the items `add` was given and, recursively, the items they list in `registryDependencies`: each once, dependencies first, cycles refused.
//
// A dependency is a built-in block name (left to resolveBlocks), `@registry/name`, an http(s) URL
// (one matching a configured registry's url is that registry's item, headers included; any other
// URL is fetched without them), or a bare name an item of a registry lists for its sibling there.
import path from "node:path";
import { BlocksError } from "../utils/errors.js";
import { fetchRegistryJson } from "./fetch-item.js";
import type { NamedRegistry, RegistryConfig } from "./registries-config.js";
import type { ItemOrigin, Registry } from "./types.js";

export type ResolvedItem = {
  /** The first argument or dependency that named the item: errors and descriptions show it. */
  source: string;
  /** Every spelling that named it (`@acme/x`, its URL, a sibling's bare "x"): each maps to its block. */
  specs: string[];
  item: unknown;
  origin?: ItemOrigin;
};

export type ResolveContext = {
  registries: Record<string, RegistryConfig>;
  /** Names of the blocks that ship with the CLI: a dependency on one needs no fetch. */
  builtIn: ReadonlySet<string>;
  /** How `add <file|url>` reads an item that no configured registry serves. */
  read: (source: string) => Promise<unknown>;
};

const ADDRESS = /^(@[a-z0-9][a-z0-9._-]*)\/([a-z0-9][a-z0-9-]*)$/;
const BARE_NAME = /^[a-z0-9][a-z0-9-]*$/;

/**
 * Whether an argument is `@registry/name`.
 *
 * @example
 * isRegistryAddress("@acme/audit-log"); // true
 */
export function isRegistryAddress(argument: string): boolean {
  return ADDRESS.test(argument);
}

type Target = { key: string; source: string; registry?: NamedRegistry; name?: string };

/**
 * @example
 * const items = await resolveItemSources(["@acme/audit-log"], { registries, builtIn: new Set(["logger"]), read });
 * items.map((resolved) => resolved.source); // ["@acme/tenant-guard", "@acme/audit-log"]: dependencies first
 */
export async function resolveItemSources(sources: string[], context: ResolveContext): Promise<ResolvedItem[]> {
  const done = new Map<string, ResolvedItem>();
  const ordered: ResolvedItem[] = [];
  const visit = async (spec: string, from: Target | undefined, trail: Target[]): Promise<void> => {
    const target = locate(spec, from, context);
    if (target === undefined) return;
    const seen = done.get(target.key);
    if (seen) {
      if (!seen.specs.includes(spec)) seen.specs.push(spec);
      return;
    }
    if (trail.some((step) => step.key === target.key)) {
      const chain = [...trail.slice(trail.findIndex((step) => step.key === target.key)), target].map(
        (step) => step.source,
      );
      throw new BlocksError("INVALID_REGISTRY", `The registryDependencies form a cycle: ${chain.join(" -> ")}.`, {
        suggestion:
          "Remove one of these dependencies from its item: an item cannot (even indirectly) depend on itself.",
      });
    }
    const item = await read(target, context);
    for (const dependency of dependencies(item, target.source)) await visit(dependency, target, [...trail, target]);
    const resolved: ResolvedItem = { source: target.source, specs: [spec], item };
    if (target.registry && target.name)
      resolved.origin = { registry: target.registry.name, url: target.registry.url, item: target.name };
    done.set(target.key, resolved);
    ordered.push(resolved);
  };
  for (const source of sources) await visit(source, undefined, []);
  return ordered;
}

/** What a spec points at, or undefined for a block that ships with the CLI (or a name resolveBlocks will report). */
function locate(spec: string, from: Target | undefined, context: ResolveContext): Target | undefined {
  const address = ADDRESS.exec(spec);
  if (address) return registryTarget(address[1] as string, address[2] as string, context);
  if (/^https?:\/\//.test(spec)) return matchRegistry(spec, context) ?? { key: spec, source: spec };
  if (BARE_NAME.test(spec)) {
    if (context.builtIn.has(spec) || !from?.registry) return undefined;
    return registryTarget(from.registry.name, spec, context);
  }
  if (from) {
    throw new BlocksError(
      "INVALID_REGISTRY",
      `The registry item ${from.source} lists the dependency ${JSON.stringify(spec)}, which is neither a block name, an @registry/name nor an http(s) URL.`,
      {
        suggestion: "An item may not make `add` read a local file: list the dependency by name or URL.",
      },
    );
  }
  return { key: path.resolve(spec), source: spec };
}

function registryTarget(namespace: string, name: string, context: ResolveContext): Target {
  const config = context.registries[namespace];
  if (!config) {
    const known = Object.keys(context.registries);
    throw new BlocksError(
      "UNKNOWN_REGISTRY",
      `No registry named ${namespace} is configured (wanted for ${namespace}/${name}).`,
      {
        suggestion: known.length
          ? `Configured in blocks.json: ${known.join(", ")}.`
          : `Add it to "registries" in blocks.json: { "${namespace}": { "url": "https://.../{name}.json" } }.`,
      },
    );
  }
  return {
    key: `${namespace}/${name}`,
    source: `${namespace}/${name}`,
    registry: { ...config, name: namespace },
    name,
  };
}

/** A URL of the shape a configured registry's url makes is that registry's item, so its headers (and only its) go along. */
function matchRegistry(url: string, context: ResolveContext): Target | undefined {
  for (const [namespace, config] of Object.entries(context.registries)) {
    const [before, ...after] = config.url.split("{name}").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    const match = new RegExp(`^${before}([a-z0-9][a-z0-9-]*)${after.join("\\1")}$`).exec(url);
    if (match) return registryTarget(namespace, match[1] as string, context);
  }
  return undefined;
}

async function read(target: Target, context: ResolveContext): Promise<unknown> {
  if (!target.registry || !target.name) return context.read(target.source);
  const item = await fetchRegistryJson(
    target.registry,
    target.registry.url.replaceAll("{name}", target.name),
    `the item "${target.name}"`,
  );
  const name = (item as { name?: unknown } | null)?.name;
  if (name !== target.name) {
    throw new BlocksError(
      "INVALID_REGISTRY",
      `Registry ${target.registry.name} answered ${target.source} with an item named ${JSON.stringify(name)}.`,
      {
        suggestion:
          "An item's name must be the name it is served under: rebuild the registry with `blocks registry build`.",
      },
    );
  }
  return item;
}

function dependencies(item: unknown, source: string): string[] {
  const list = (item as { registryDependencies?: unknown } | null)?.registryDependencies;
  if (list === undefined) return [];
  if (!Array.isArray(list) || list.some((entry) => typeof entry !== "string")) {
    throw new BlocksError(
      "INVALID_REGISTRY",
      `The registry item ${source} has "registryDependencies" that is not a list of strings.`,
    );
  }
  return list as string[];
}

/**
 * Every spelling of each resolved item names its block (so resolveBlocks follows a dependency however
 * it was written), and blocks from a configured registry carry their origin for the lock.
 *
 * @example
 * withOrigins(registry, resolved).sources?.["@acme/audit-log"]; // "audit-log"
 */
export function withOrigins(registry: Registry, resolved: ResolvedItem[]): Registry {
  const sources = { ...registry.sources };
  const blocks = [...registry.blocks];
  for (const { source, specs, origin } of resolved) {
    const name = sources[source];
    for (const spec of specs) if (name !== undefined) sources[spec] = name;
    const at = blocks.findIndex((block) => block.name === name);
    const block = blocks[at];
    if (origin && block) blocks[at] = { ...block, origin };
  }
  return { ...registry, sources, blocks };
}
