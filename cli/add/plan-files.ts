// Plans every file `add` would write: target path, rewritten content, and what to do given disk and lock.
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { BlocksConfig } from "../config/blocks-config.js";
import { lockedHash, type Lock } from "../config/lock-file.js";
import { projectFormatter } from "../format/project-formatter.js";
import { selectFiles, selectTemplates, type FileSelection } from "../registry/resolve.js";
import type { Registry, RegistryBlock } from "../registry/types.js";
import { contentHash, insideProject, readIfExists } from "../utils/files.js";
import type { ChosenVariant } from "./plan-variants.js";

/**
 * create: new file. update: unchanged by the user, registry moved on. unchanged: identical already.
 * modified: the user edited it since `add` (lock hash differs); conflict: a file `add` never wrote is in the way.
 */
export type FileState = "create" | "update" | "unchanged" | "modified" | "conflict";

export type PlannedFile = {
  block: string;
  /** Registry-relative source (templates are prefixed by their folder, e.g. "../templates/..."). */
  source: string;
  /** Project-relative target, forward slashes. */
  target: string;
  absolute: string;
  content: string;
  hash: string;
  state: FileState;
  /** What is on disk now, for the diff shown before anything is replaced. */
  current?: string | undefined;
  /** Written once for the user to own (the wiring module): never replaced, never recorded in the lock. */
  owned?: boolean;
  /** One version of a variant file (setup/database.ts on Kysely): its source is recorded in the lock. */
  variant?: boolean;
};

type Entry = { block: string; source: string; target: string; registryPath?: string | undefined; variant?: boolean };

/**
 * @example
 * const files = await planFiles({ root, config, registry, lock, blocks, selection });
 * files.filter((file) => file.state === "modified"); // the user's edits, never overwritten silently
 */
export async function planFiles(input: {
  root: string;
  config: BlocksConfig;
  registry: Registry;
  lock: Lock;
  blocks: RegistryBlock[];
  selection: FileSelection;
  /** Registry paths left out (files of features the user did not choose). */
  skip?: ReadonlySet<string>;
  /** The chosen version of each variant file, per block (add/plan-variants.ts). */
  variants?: Readonly<Record<string, ChosenVariant[]>>;
  /** Block -> the table `add --table` named, written into the block's `setup.table` module. */
  tables?: Readonly<Record<string, string>>;
}): Promise<PlannedFile[]> {
  const { root, config, registry } = input;
  const posix = path.posix;
  const entries: Entry[] = input.blocks.flatMap((block) => [
    ...selectFiles(block, input.selection)
      .filter((file) => !input.skip?.has(file.path))
      .map((file) => ({
        block: block.name,
        source: file.path,
        registryPath: file.path,
        target: posix.normalize(posix.join(config.dir, file.target ?? file.path)),
      })),
    ...(input.variants?.[block.name] ?? []).map((variant) => ({
      block: block.name,
      source: variant.path,
      registryPath: variant.path,
      target: posix.normalize(posix.join(config.dir, variant.target)),
      variant: true,
    })),
    ...selectTemplates(block, input.selection).map((template) => ({
      block: block.name,
      source: template.template,
      target: posix.normalize(posix.join(config.dir, template.target)),
    })),
  ]);
  const planned = plannedTargets(entries, config.dir);
  // A block planned alone (`diff`, `update`) may import another block the project already has (a
  // team's block on the shipped logger): those imports resolve to the files the lock recorded.
  for (const block of registry.blocks) {
    const locked = input.lock.blocks[block.name];
    if (!locked || input.blocks.some((planning) => planning.name === block.name)) continue;
    for (const file of block.files) {
      const target = posix.normalize(posix.join(config.dir, file.target ?? file.path));
      if (target in locked.files && !planned.has(file.path)) planned.set(file.path, { target, block: block.name });
    }
  }
  // A README's snippets may import any block's files (the logger, another framework's adapter): each
  // resolves to where `add` puts it, so every snippet reads in the project's import style.
  const documented = new Map([
    ...registry.blocks.flatMap((block) =>
      block.files.map(
        (file) =>
          [
            file.path,
            { target: posix.normalize(posix.join(config.dir, file.target ?? file.path)), block: block.name },
          ] as const,
      ),
    ),
    ...planned,
  ]);
  // ts-morph (and the TypeScript it carries) takes most of a second to load: only commands that rewrite pay for it.
  const { transformSource } = await import("../transforms/transform.js");
  const { renderReadme } = await import("./render-readme.js");
  const formatter = await projectFormatter(root);
  const files: PlannedFile[] = [];
  for (const entry of entries) {
    const absolute = insideProject(root, entry.target);
    const text = withTable(
      await readFile(path.join(registry.root, entry.source), "utf8"),
      entry,
      input.blocks,
      input.tables,
    );
    const ctx = {
      from: {
        registryPath: entry.registryPath,
        block: entry.registryPath ? entry.block : undefined,
        target: entry.target,
      },
      planned,
      omitted: input.skip,
      alias: config.alias ?? undefined,
      blocksDir: posix.normalize(config.dir),
      moduleStyle: config.moduleStyle,
    };
    const rendered = entry.source.endsWith(".md")
      ? renderReadme(text, { ...ctx, planned: documented })
      : transformSource(text, entry.source, ctx);
    // What the project's formatter makes of it is the version blocks writes, hashes and merges from.
    const content = formatter ? await formatter.format(absolute, rendered) : rendered;
    const current = await readIfExists(absolute);
    const hash = contentHash(content);
    files.push({
      ...entry,
      absolute,
      content,
      hash,
      current,
      state: stateOf(current, hash, lockedHash(input.lock, entry.target)),
    });
  }
  return files;
}

/**
 * Registry path -> target of every file planned; a file landing under another name (a variant's
 * version, an item's file with a target) also answers to that name, as the files importing it say it.
 */
function plannedTargets(entries: Entry[], dir: string): Map<string, { target: string; block: string }> {
  const planned = new Map<string, { target: string; block: string }>();
  for (const entry of entries) {
    if (!entry.registryPath) continue;
    planned.set(entry.registryPath, { target: entry.target, block: entry.block });
    const underName = path.posix.relative(path.posix.normalize(dir), entry.target);
    if (underName !== entry.registryPath && !planned.has(underName))
      planned.set(underName, { target: entry.target, block: entry.block });
  }
  return planned;
}

/** The block's table module with the table `add --table` named in place of the default one (a JSON string: nothing else changes). */
function withTable(
  text: string,
  entry: Entry,
  blocks: RegistryBlock[],
  tables: Readonly<Record<string, string>> | undefined,
): string {
  const block = blocks.find((candidate) => candidate.name === entry.block);
  const table = tables?.[entry.block];
  const fallback = block?.migration?.table;
  if (!block?.setup?.table || entry.registryPath !== block.setup.table || !table || !fallback || table === fallback)
    return text;
  return text.replace(JSON.stringify(fallback), JSON.stringify(table));
}

/**
 * The wiring the user owns (block.json's `setup.files`: src/idempotency-setup.ts, the cron entry):
 * planned only where no such file exists yet, importing the blocks by relative paths, so they run
 * under plain `node` and `vitest`, alias or not.
 *
 * @example
 * await planSetupFiles({ root, config, registry, block, planned: files });
 */
export async function planSetupFiles(input: {
  root: string;
  config: BlocksConfig;
  registry: Registry;
  block: RegistryBlock;
  planned: PlannedFile[];
  /** Render them even where a file exists (`update`, replacing a wiring module an older `add` wrote). */
  replace?: boolean;
}): Promise<PlannedFile[]> {
  const { root, config, block } = input;
  const posix = path.posix;
  const owned = (block.setup?.files ?? []).map((file) => ({
    block: block.name,
    source: file.path,
    registryPath: file.path,
    target: posix.normalize(posix.join(config.dir, file.target)),
  }));
  const entries: Entry[] = [
    ...input.planned.map((file) => ({
      block: file.block,
      source: file.source,
      registryPath: file.source,
      target: file.target,
    })),
    ...owned,
  ];
  const planned = plannedTargets(entries, config.dir);
  const { transformSource } = await import("../transforms/transform.js");
  const formatter = await projectFormatter(root);
  const files: PlannedFile[] = [];
  for (const entry of owned) {
    const absolute = insideProject(root, entry.target);
    if (!input.replace && (await readIfExists(absolute)) !== undefined) continue;
    const text = await readFile(path.join(input.registry.root, entry.source), "utf8");
    const ctx = {
      from: { registryPath: entry.registryPath, target: entry.target },
      planned,
      alias: undefined,
      blocksDir: posix.normalize(config.dir),
      moduleStyle: config.moduleStyle,
    };
    const rendered = transformSource(text, entry.source, ctx);
    const content = formatter ? await formatter.format(absolute, rendered) : rendered;
    files.push({ ...entry, absolute, content, hash: contentHash(content), state: "create", owned: true });
  }
  return files;
}

function stateOf(current: string | undefined, hash: string, locked: string | undefined): FileState {
  if (current === undefined) return "create";
  const currentHash = contentHash(current);
  if (currentHash === hash) return "unchanged";
  if (locked === undefined) return "conflict";
  return currentHash === locked ? "update" : "modified";
}
