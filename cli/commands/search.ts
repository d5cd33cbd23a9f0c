// `blocks search [query]`: the built-in blocks and every configured registry's items whose name or description matches.
import path from "node:path";
import { Command } from "commander";
import { loadRegistry } from "../registry/manifest.js";
import { namedRegistries, projectConfig } from "../registry/project-registries.js";
import { readIndex } from "../registry/registry-index.js";
import { isBlocksError } from "../utils/errors.js";
import { handleError } from "../utils/handle-error.js";
import { highlighter } from "../utils/highlighter.js";
import { configureOutput, logger, printJson } from "../utils/logger.js";

export type SearchOptions = {
  query?: string | undefined;
  cwd?: string;
  registry?: string;
  json?: boolean;
  silent?: boolean;
};

export type SearchResult = {
  /** What `blocks add` and `blocks view` take: `idempotency`, `@acme/audit-log`. */
  name: string;
  /** "built-in", or the configured registry (`@acme`). */
  registry: string;
  description: string;
};

/** A configured registry whose index could not be read: the search went on without it. */
export type UnreachableRegistry = { registry: string; code: string; message: string };

/**
 * Every word of the query must appear in an entry's name or description (case-insensitive). A
 * registry whose index fails is named in `unreachable` (and on stderr) and the others are still
 * searched; `ok` is then false, and the command exits 1, so a script never mistakes "unreachable"
 * for "no match".
 *
 * @example
 * const { items } = await runSearch({ query: "audit", cwd: "/app" });
 * items[0]; // { name: "@acme/audit-log", registry: "@acme", description: "..." }
 */
export async function runSearch(options: SearchOptions) {
  const root = path.resolve(options.cwd ?? process.cwd());
  const config = await projectConfig(root);
  const builtIn = await loadRegistry(options.registry);
  const entries: SearchResult[] = builtIn.blocks.map((block) => ({
    name: block.name,
    registry: "built-in",
    description: block.description,
  }));
  const unreachable: UnreachableRegistry[] = [];
  const registries = namedRegistries(config);
  const indexes = await Promise.allSettled(registries.map((registry) => readIndex(registry)));
  for (const [i, read] of indexes.entries()) {
    const registry = registries[i] as (typeof registries)[number];
    if (read.status === "rejected") {
      const err: unknown = read.reason;
      if (!isBlocksError(err)) throw err;
      unreachable.push({ registry: registry.name, code: err.code, message: err.message });
      continue;
    }
    for (const entry of read.value) {
      entries.push({
        name: `${registry.name}/${entry.name}`,
        registry: registry.name,
        description: entry.description ?? entry.title ?? "",
      });
    }
  }
  const words = (options.query ?? "").toLowerCase().split(/\s+/).filter(Boolean);
  const items = entries.filter((entry) =>
    words.every((word) => `${entry.name} ${entry.description}`.toLowerCase().includes(word)),
  );
  const width = Math.max(0, ...items.map((item) => item.name.length));
  for (const item of items) logger.log(`${highlighter.path(item.name.padEnd(width))}  ${item.description}`);
  if (items.length === 0) logger.warn(`Nothing matches ${JSON.stringify(options.query ?? "")}.`);
  for (const failed of unreachable)
    process.stderr.write(`${highlighter.error(`✖ ${failed.message}`)} ${highlighter.dim(`[${failed.code}]`)}\n`);
  return { ok: unreachable.length === 0, query: options.query ?? "", items, unreachable };
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
      if (!result.ok) process.exitCode = 1;
    } catch (err) {
      handleError(err, opts);
    }
  });
