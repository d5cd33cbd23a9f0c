// `blocks update [block...]`: brings vendored copies to the registry's version by a three-way merge per file.
import { Command } from "commander";
import { installCommands } from "../add/install.js";
import { writeLock } from "../config/lock-file.js";
import { pruneBases, recordBases } from "../update/base-store.js";
import { nextLock, planUpdate, type UpdatedFile, type UpdatePlan, type UpdateStatus } from "../update/plan-update.js";
import type { SchemaChange } from "../update/schema-changes.js";
import { assertWritable, writeProjectFile } from "../utils/files.js";
import { handleError } from "../utils/handle-error.js";
import { highlighter } from "../utils/highlighter.js";
import { configureOutput, logger, printJson } from "../utils/logger.js";
import { cliVersion } from "../utils/package-root.js";
import { cancelled, decide } from "../utils/prompt.js";

export type UpdateOptions = {
  blocks?: string[];
  cwd?: string;
  registry?: string;
  yes?: boolean;
  dryRun?: boolean;
  json?: boolean;
  silent?: boolean;
};

const LABELS: Record<UpdateStatus, (file: UpdatedFile) => string> = {
  updated: () => highlighter.info("updated (you had not changed it)"),
  merged: () => highlighter.success("merged: your edits and the registry's changes"),
  conflict: (file) => highlighter.error(`CONFLICT: ${file.conflicts} region(s) changed by both; resolve the markers`),
  unresolved: (file) =>
    highlighter.error(
      `UNRESOLVED: ${file.conflicts} conflict(s) from an earlier update still marked (line ${file.lines?.join(", ")}); keep what you want between <<<<<<< yours and >>>>>>> registry, delete the markers, run update again`,
    ),
  added: () => highlighter.success("added (new in the registry)"),
  unchanged: () => highlighter.dim("unchanged"),
  kept: () => highlighter.dim("kept: your edits, the registry did not change it"),
  deleted: () => highlighter.warn("you deleted it: it stays deleted (restore it with `blocks add --overwrite`)"),
  dropped: () => highlighter.warn("no longer in the registry: left in place, no longer tracked; delete it if unused"),
  skipped: () => highlighter.warn("a file blocks did not write is in the way: left alone"),
  "no-base": () => highlighter.error("edited, but no base was recorded to merge from: compare with `blocks diff`"),
  replaced: () =>
    highlighter.info(
      "replaced: the wiring an older add wrote (you had not changed it) now re-exports the block's wiring, which update keeps up to date",
    ),
  manual: (file) => highlighter.warn(`CHANGE IT YOURSELF: ${file.message ?? ""}`),
};

const NEEDS_YOU = new Set<UpdateStatus>(["conflict", "unresolved", "no-base", "manual"]);

/**
 * Plans, asks before writing (or `--yes`), writes, records the new bases. Exits 1 (through the
 * command) when a conflict or an unmergeable file needs the user.
 *
 * @example
 * const result = await runUpdate({ cwd: "/app", yes: true });
 * result.conflicts; // ["src/blocks/idempotency/handler.ts"]
 */
export async function runUpdate(options: UpdateOptions) {
  const plan = await planUpdate({ cwd: options.cwd, blocks: options.blocks ?? [], registry: options.registry });
  report(plan);
  const writes = plan.files.filter((file) => file.content !== undefined);
  const needsYou = plan.files.filter((file) => NEEDS_YOU.has(file.status)).map((file) => file.target);
  const result = (written: boolean, droppedBases: DroppedBase[] = []) => ({
    ok: needsYou.length === 0,
    dryRun: options.dryRun === true,
    written,
    files: plan.files.map(({ block, target, status, conflicts, message }) => ({
      block,
      target,
      status,
      ...(conflicts ? { conflicts } : {}),
      ...(message ? { message } : {}),
    })),
    conflicts: needsYou,
    install: installCommands(plan.packageManager, plan.packages).map((command) => command.join(" ")),
    schemaChanges: plan.schemaChanges,
    droppedBases,
  });
  if (options.dryRun) {
    logger.info("Dry run: nothing was written.");
    return result(false);
  }
  const lock = nextLock(plan, cliVersion());
  if (writes.length > 0) {
    const message = `Write ${writes.length} file(s)${needsYou.length ? `, ${needsYou.length} with conflicts to resolve` : ""}?`;
    if (!(await decide({ message, flag: "--yes (or --dry-run to only see the plan)" }, options.yes))) cancelled();
    for (const file of writes) await assertWritable(file.absolute as string);
    for (const file of writes) await writeProjectFile(file.absolute as string, file.content as string);
  }
  await recordBases(
    plan.root,
    plan.files.flatMap((file) => (file.base === undefined ? [] : [{ content: file.base }])),
  );
  await writeLock(plan.root, lock);
  const droppedBases = explainDroppedBases(plan, await pruneBases(plan.root, lock));
  for (const line of droppedBases) logger.info(`.blocks/bases: removed ${line.reason}`);
  const install = installCommands(plan.packageManager, plan.packages);
  if (install.length)
    logger.warn(
      `The registry's version needs packages you do not declare; install them: ${install.map((command) => command.join(" ")).join(" && ")}`,
    );
  if (needsYou.length) logger.error(`${needsYou.length} file(s) need you: ${needsYou.join(", ")}`);
  else logger.success(writes.length ? `Updated ${writes.length} file(s) and blocks.lock.json.` : "Already up to date.");
  return result(writes.length > 0, droppedBases);
}

type DroppedBase = { hash: string; file?: string; reason: string };

/** Why each base went: the lock no longer names it, and the old lock says which file it was for. */
function explainDroppedBases(plan: UpdatePlan, hashes: string[]): DroppedBase[] {
  const owners = new Map(
    Object.values(plan.lock.blocks).flatMap((block) =>
      Object.entries(block.files).map(([file, hash]) => [hash, file] as const),
    ),
  );
  return hashes.map((hash) => {
    const file = owners.get(hash);
    if (file === undefined) {
      return {
        hash,
        reason: `${hash.slice(7, 19)}…: no file in blocks.lock.json has it as its base (a copy of a file blocks never merges into, such as the wiring module an older add kept)`,
      };
    }
    const status = plan.files.find((candidate) => candidate.target === file)?.status;
    const why =
      status === "dropped"
        ? "the registry no longer has that file, so it is no longer tracked"
        : "its base is now the registry's version, which the next update merges from";
    return { hash, file, reason: `the old base of ${file}: ${why}` };
  });
}

function report(plan: UpdatePlan): void {
  const quiet = plan.files.filter((file) => file.status === "unchanged" || file.status === "kept");
  for (const file of plan.files.filter((candidate) => !quiet.includes(candidate))) {
    logger.log(`  ${highlighter.path(file.target)}: ${LABELS[file.status](file)}`);
  }
  if (quiet.length) logger.log(highlighter.dim(`  ${quiet.length} file(s) unchanged or keeping your edits`));
  for (const change of plan.schemaChanges) logger.warn(schemaChangeMessage(change));
}

/** Code that expects a column or a function the database lacks fails at run time: the update says so before anyone deploys it. */
function schemaChangeMessage(change: SchemaChange): string {
  const lines = [
    `${change.block}: this version changes the schema of ${change.table}. Run \`blocks migrate\` and apply the migration it writes (the block's store notes say whether before or after the deploy):`,
    ...change.added.map((line) => `  + ${line}`),
    ...change.changed.map((line) => `  ~ ${line}`),
    ...change.removed.map((line) => `  - ${line}`),
  ];
  if (change.changed.length)
    lines.push(
      `  (~: the same object with a new definition; \`blocks migrate --print\` shows the statement to run again if the migration leaves it out)`,
    );
  if (change.removed.length) lines.push(`  (-: no longer created; nothing drops what an earlier migration made)`);
  return lines.join("\n");
}

export const update = new Command("update")
  .description(
    "bring vendored blocks to the registry's version: a three-way merge keeps your edits; conflicts get markers and exit 1",
  )
  .argument("[blocks...]", "blocks to update (default: every added block)")
  .option("-y, --yes", "write without asking")
  .option("--dry-run", "print what would happen and write nothing")
  .option("--json", "print the result as JSON")
  .option("-c, --cwd <path>", "the project folder (default: the current one)")
  .option("--registry <path>", "use another registry folder (for block authors)")
  .option("-s, --silent", "print nothing but errors")
  .action(async (blocks: string[], opts: Omit<UpdateOptions, "blocks">) => {
    configureOutput({ silent: opts.silent || opts.json });
    try {
      const result = await runUpdate({ ...opts, blocks });
      if (opts.json) printJson(result);
      if (!result.ok) process.exitCode = 1;
    } catch (err) {
      handleError(err, opts);
    }
  });
