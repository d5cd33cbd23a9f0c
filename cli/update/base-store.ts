// The bases `blocks update` merges from: what `add` wrote, kept by content hash in .blocks/bases/.
//
// Why a folder of copies and not a version number: the registry's old version is gone once the CLI
// is upgraded, and fetching it would need the network and a release history. The exact bytes written
// (already rendered through the project's import rewrite) are the only base a three-way merge can trust.
// They are content-addressed by the hash the lock already records, so the lock names the base, a base
// can be checked against its name, and files without an extension are picked up by no compiler or test runner.
import { readdir, rm } from "node:fs/promises";
import path from "node:path";
import type { Lock } from "../config/lock-file.js";
import { contentHash, insideProject, readIfExists, writeProjectFile } from "../utils/files.js";

export const BASES_DIR = ".blocks/bases";

/**
 * Keeps a copy of each written content under its hash; `add` calls this after writing its files.
 *
 * @example
 * await recordBases("/app", plan.files); // .blocks/bases/<sha256 hex> for each
 */
export async function recordBases(root: string, files: ReadonlyArray<{ content: string }>): Promise<void> {
  for (const { content } of files) {
    const file = insideProject(root, `${BASES_DIR}/${hex(contentHash(content))}`);
    if ((await readIfExists(file)) === undefined) await writeProjectFile(file, content);
  }
}

/**
 * The content whose hash the lock recorded, or undefined when it was never kept (or no longer matches).
 *
 * @example
 * const base = await readBase("/app", lock.blocks.idempotency.files["src/blocks/idempotency/index.ts"]);
 */
export async function readBase(root: string, hash: string): Promise<string | undefined> {
  if (!/^sha256-[0-9a-f]{64}$/.test(hash)) return undefined;
  const content = await readIfExists(insideProject(root, `${BASES_DIR}/${hex(hash)}`));
  return content !== undefined && contentHash(content) === hash ? content : undefined;
}

/**
 * Deletes the bases no lock entry names any more, and says which (by hash, as the lock names them).
 *
 * @example
 * await pruneBases("/app", lock); // ["sha256-…"]
 */
export async function pruneBases(root: string, lock: Lock): Promise<string[]> {
  const kept = new Set(Object.values(lock.blocks).flatMap((block) => Object.values(block.files).map(hex)));
  const dir = insideProject(root, BASES_DIR);
  const names = await readdir(dir).catch(() => [] as string[]);
  const removed: string[] = [];
  for (const name of names.filter((candidate) => /^[0-9a-f]{64}$/.test(candidate) && !kept.has(candidate)).sort()) {
    await rm(path.join(dir, name), { force: true });
    removed.push(`sha256-${name}`);
  }
  return removed;
}

function hex(hash: string): string {
  return hash.replace(/^sha256-/, "");
}
