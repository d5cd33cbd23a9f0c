// The registries a project configured, for commands that also work outside a project (search, view, mcp).
import { existsSync } from "node:fs";
import path from "node:path";
import { CONFIG_FILE, readConfig, type BlocksConfig } from "../config/blocks-config.js";
import type { NamedRegistry } from "./registries-config.js";

/**
 * blocks.json when the folder has one (validated, so a broken `registries` is an error here too), else undefined.
 *
 * @example
 * const config = await projectConfig("/app"); // undefined before `blocks init`
 */
export async function projectConfig(root: string): Promise<BlocksConfig | undefined> {
  return existsSync(path.join(root, CONFIG_FILE)) ? readConfig(root) : undefined;
}

/**
 * @example
 * namedRegistries(config); // [{ name: "@acme", url: "https://r.acme.dev/{name}.json", headers: { ... } }]
 */
export function namedRegistries(config: BlocksConfig | undefined): NamedRegistry[] {
  return Object.entries(config?.registries ?? {}).map(([name, registry]) => ({ ...registry, name }));
}
