// blocks.lock.json: what `add` wrote, with content hashes, so later runs can tell user edits from stale copies.
import path from "node:path";
import { projectFormatter } from "../format/project-formatter.js";
import { BlocksError } from "../utils/errors.js";
import type { ItemOrigin } from "../registry/types.js";
import { insideProject, readIfExists, writeProjectFile } from "../utils/files.js";

export const LOCK_FILE = "blocks.lock.json";

export type LockedBlock = {
  /** CLI version that last wrote the block. */
  version: string;
  frameworks: string[];
  tests: boolean;
  /** Project-relative path -> hash of the content `add` wrote there. */
  files: Record<string, string>;
  /**
   * The version chosen of each variant file: its target (relative to the blocks folder, as block.json
   * names it) -> the registry file copied there. `update` keeps to it, merging that version's changes.
   */
  variants?: Record<string, string>;
  /** The table the block's store was added with (`add --table`): `migrate` and a later `add` use it. */
  table?: string;
  /** Added from a configured registry: its name and item URL template (never its headers). */
  registry?: ItemOrigin;
};

export type Lock = {
  version: 1;
  blocks: Record<string, LockedBlock>;
  /** Table name -> project-relative migration file that creates it. */
  migrations: Record<string, string>;
};

/**
 * @example
 * const lock = await readLock("/app"); // an empty lock before the first `add`
 */
export async function readLock(root: string): Promise<Lock> {
  const text = await readIfExists(path.join(root, LOCK_FILE));
  if (text === undefined) return { version: 1, blocks: {}, migrations: {} };
  try {
    const lock = JSON.parse(text) as Partial<Lock>;
    return { version: 1, blocks: lock.blocks ?? {}, migrations: lock.migrations ?? {} };
  } catch (cause) {
    throw new BlocksError("INVALID_CONFIG", `${LOCK_FILE} is not valid JSON.`, {
      cause,
      suggestion: `Restore it from version control; without it every vendored file counts as edited by you.`,
    });
  }
}

/**
 * Writes the lock with sorted keys, so it diffs cleanly in code review.
 *
 * @example
 * await writeLock("/app", lock);
 */
export async function writeLock(root: string, lock: Lock): Promise<void> {
  const sorted = {
    version: 1,
    blocks: Object.fromEntries(
      Object.entries(lock.blocks)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, block]) => [
          name,
          { ...block, files: Object.fromEntries(Object.entries(block.files).sort(([a], [b]) => a.localeCompare(b))) },
        ]),
    ),
    migrations: lock.migrations,
  };
  const file = insideProject(root, LOCK_FILE);
  const text = `${JSON.stringify(sorted, null, 2)}\n`;
  // As the project's formatter writes it, so its `format --check` over the whole project passes.
  const formatter = await projectFormatter(root);
  await writeProjectFile(file, formatter ? await formatter.format(file, text) : text);
}

/**
 * The recorded hash of a file, whichever block wrote it.
 *
 * @example
 * lockedHash(lock, "src/blocks/idempotency/index.ts"); // "sha256-..." or undefined
 */
export function lockedHash(lock: Lock, file: string): string | undefined {
  for (const block of Object.values(lock.blocks)) {
    const hash = block.files[file];
    if (hash) return hash;
  }
  return undefined;
}
