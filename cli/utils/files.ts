// File-system helpers that keep every write inside the project and turn OS errors into clear ones.
import { createHash } from "node:crypto";
import { existsSync, lstatSync, realpathSync, statSync } from "node:fs";
import { access, constants, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { BlocksError } from "./errors.js";

/**
 * SHA-256 of a file's content, as recorded in blocks.lock.json.
 *
 * @example
 * contentHash("x"); // "sha256-2d71..."
 */
export function contentHash(content: string): string {
  return `sha256-${createHash("sha256").update(content).digest("hex")}`;
}

/**
 * A project-relative path with forward slashes, as written in blocks.json and the lock.
 *
 * @example
 * toPosix(path.join("src", "blocks")); // "src/blocks" on every OS
 */
export function toPosix(p: string): string {
  return p.split(path.sep).join("/");
}

/**
 * Resolves `relative` against `root` and refuses anything that lands outside it: `../`, absolute
 * paths, and symlinks (of the file or any folder on the way) that lead out, dangling ones included,
 * because writing through a dangling link creates the file wherever it points.
 *
 * @example
 * insideProject("/app", "src/blocks/idempotency/index.ts"); // "/app/src/blocks/idempotency/index.ts"
 * insideProject("/app", "../etc/passwd"); // throws TARGET_OUTSIDE_PROJECT
 */
export function insideProject(root: string, relative: string): string {
  const absolute = path.resolve(root, relative);
  if (!isWithin(root, absolute)) throw outside(root, relative, "it is outside the project");
  const realRoot = realpathSync(root);
  const existing = nearestExisting(absolute);
  let real: string;
  try {
    real = realpathSync(existing);
  } catch {
    throw outside(
      root,
      relative,
      `${path.relative(root, existing)} is a symlink to nothing (a dangling link would create the file wherever it points)`,
    );
  }
  if (!isWithin(realRoot, real))
    throw outside(root, relative, `${path.relative(root, existing) || "."} is a symlink that leads to ${real}`);
  return absolute;
}

function outside(root: string, relative: string, why: string): BlocksError {
  return new BlocksError(
    "TARGET_OUTSIDE_PROJECT",
    `Refusing to write ${relative}: ${why}; blocks only write inside the project at ${root}.`,
    {
      suggestion:
        "Check the `dir` and `database.migrations` in blocks.json, the registry entry's target, and any symlink on the path.",
    },
  );
}

function isWithin(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** The deepest path that exists as an entry, a dangling symlink included (lstat, not stat). */
function nearestExisting(absolute: string): string {
  let current = absolute;
  while (!lexists(current)) current = path.dirname(current);
  return current;
}

function lexists(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * Fails with NOT_WRITABLE before anything is written when `absolute` cannot be created.
 *
 * @example
 * await assertWritable("/app/src/blocks/idempotency/index.ts");
 */
export async function assertWritable(absolute: string): Promise<void> {
  let current = path.dirname(absolute);
  while (!existsSync(current)) current = path.dirname(current);
  try {
    if (!statSync(current).isDirectory()) throw new Error(`${current} is a file, not a folder.`);
    await access(current, constants.W_OK);
  } catch (cause) {
    throw notWritable(current, cause);
  }
}

/**
 * Writes a file, creating its folders, and reports OS errors as NOT_WRITABLE.
 *
 * @example
 * await writeProjectFile("/app/blocks.json", "{}\n");
 */
export async function writeProjectFile(absolute: string, content: string): Promise<void> {
  try {
    await mkdir(path.dirname(absolute), { recursive: true });
    await writeFile(absolute, content);
  } catch (cause) {
    throw notWritable(absolute, cause);
  }
}

function notWritable(target: string, cause: unknown): BlocksError {
  return new BlocksError("NOT_WRITABLE", `Cannot write to ${target}.`, {
    cause,
    suggestion: "Check that the folder exists as a folder (not a file) and that you have write permission to it.",
  });
}

/**
 * Reads a UTF-8 file, or undefined when it does not exist.
 *
 * @example
 * const current = await readIfExists("/app/blocks.json");
 */
export async function readIfExists(absolute: string): Promise<string | undefined> {
  try {
    return await readFile(absolute, "utf8");
  } catch (err) {
    // ENOTDIR: a file stands where a folder of the path should be; assertWritable reports it.
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw err;
  }
}
