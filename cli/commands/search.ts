// `blocks search [query]`: the built-in blocks and every configured registry's items whose name or description matches.
import path from "node:path";
import { Command } from "commander";
import { loadRegistry } from "../registry/manifest.js";
import { namedRegistries, projectConfig } from "../registry/project-registries.js";
import { readIndex } from "../registry/registry-index.js";
import { handleError } from "../utils/handle-error.js";
import { highlighter } from "../utils/highlighter.js";
import { configureOutput, logger, printJson } from "../utils/logger.js";

export type SearchOptions = { query?: string | undefined; cwd?: string; registry?: string; json?: boolean; silent?: boolean };

export type SearchResult = {
  /** What `blocks add` and `blocks view` take: `idempotency`, `@acme/audit-log`. */
  name: string;
  /** "built-in", or the configured registry (`@acme`). */
  registry: string;
  description: string;
};

/**
 * Every word of the query must appear in an entry's name or description (case-insensitive).
 *
 * @example
 * const { items } = await runSearch({ query: "audit", cwd: "/app" });
 * items[0]; // { name: "@acme/audit-log", registry: "@acme", description: "..." }
 */
export async function runSearch(options: SearchOptions) {
  const root = path.resolve(options.cwd ?? process.cwd());
  const config = await projectConfig(root);
  const builtIn = await loadRegistry(options.registry);
  const entries: SearchResult[] = builtIn.blocks.map((block) => ({ name: block.name, registry: "built-in", description: block.description }));
  for (const registry of namedRegistries(config)) {
    for (const entry of await readIndex(registry)) {
      entries.push({ name: `${registry.name}/${entry.name}`, registry: registry.name, description: entry.description ?? entry.title ?? "" });
    }
  }
  const words = (options.query ?? "").toLowerCase().split(/\s+/).filter(Boolean);
  const items = entries.filter((entry) => words.every((word) => `${entry.name} ${entry.description}`.toLowerCase().includes(word)));
  const width = Math.max(0, ...items.map((item) => item.name.length));
  for (const item of items) logger.log(`${highlighter.path(item.name.padEnd(width))}  ${item.description}`);
  if (items.length === 0) logger.warn(`Nothing matches ${JSON.stringify(options.query ?? "")}.`);
  return { ok: true, query: options.query ?? "", items };
}

export const search = new Command("search")
  .description("find blocks and items of the registries in blocks.json by name or description")
  .argument("[query]", "words that must all appear (default: list everything)")
  .option("--json", "print the results as JSON")
  .option("-c, --cwd <path>", "the project folder, for its registries (default: the current one)")
  .option("--registry <path>", "use another registry folder (for block authors)")
  .option("-s, --silent", "print nothing but errors")
  .action(async (query: string | undefined, opts: Omit<SearchOptions, "query">) => {
    configureOutput({ silent: opts.silent || opts.json });
    try {
      const result = await runSearch({ ...opts, query });
      if (opts.json) printJson(result);
    } catch (err) {
      handleError(err, opts);
    }
  });
