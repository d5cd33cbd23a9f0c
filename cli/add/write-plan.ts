// Applies a decided plan: checks every target is writable, writes files and migrations, records the lock.
import path from "node:path";
import { writeLock, type Lock } from "../config/lock-file.js";
import { recordBases } from "../update/base-store.js";
import { assertWritable, writeProjectFile } from "../utils/files.js";
import { cliVersion } from "../utils/package-root.js";
import type { AddPlan } from "./plan-add.js";
import type { PlannedFile } from "./plan-files.js";

/**
 * Whether a planned file is written, given the user's answers.
 *
 * @example
 * shouldWrite({ ...file, state: "modified" }, { modified: false, conflicts: false }); // false
 */
export function shouldWrite(file: PlannedFile, replace: { modified: boolean; conflicts: boolean }): boolean {
  if (file.state === "create" || file.state === "update") return true;
  if (file.state === "modified") return replace.modified;
  if (file.state === "conflict") return replace.conflicts;
  return false;
}

/**
 * Nothing is written unless every target can be: a half-added block is worse than none.
 *
 * @example
 * await writePlan(plan, { modified: false, conflicts: false });
 */
export async function writePlan(
  plan: AddPlan,
  replace: { modified: boolean; conflicts: boolean },
): Promise<{ written: string[] }> {
  const files = plan.files.filter((file) => shouldWrite(file, replace));
  const migrationFiles = plan.migrations.flatMap((migration) => migration.files);
  const buildEdits = plan.build.kind === "edit" ? plan.build.edits : [];
  const targets = [
    ...files.map((file) => file.absolute),
    ...migrationFiles.map((file) => path.join(plan.root, file.path)),
    ...buildEdits.map((edit) => path.join(plan.root, edit.file)),
  ];
  for (const target of targets) await assertWritable(target);

  for (const file of files) await writeProjectFile(file.absolute, file.content);
  for (const file of migrationFiles) await writeProjectFile(path.join(plan.root, file.path), file.content);
  for (const edit of buildEdits) await writeProjectFile(path.join(plan.root, edit.file), edit.content);
  // The wiring module is the user's from the start: nothing ever merges into it, so it keeps no base.
  await recordBases(
    plan.root,
    plan.files.filter((file) => !file.owned && (shouldWrite(file, replace) || file.state === "unchanged")),
  );
  await writeLock(plan.root, nextLock(plan, new Set(files)));
  return {
    written: [
      ...files.map((file) => file.target),
      ...migrationFiles.map((file) => file.path),
      ...buildEdits.map((edit) => edit.file),
    ],
  };
}

function nextLock(plan: AddPlan, written: Set<PlannedFile>): Lock {
  const lock: Lock = { version: 1, blocks: { ...plan.lock.blocks }, migrations: { ...plan.lock.migrations } };
  for (const block of plan.blocks) {
    const previous = lock.blocks[block.name];
    const files = { ...previous?.files };
    for (const file of plan.files.filter((candidate) => candidate.block === block.name && !candidate.owned)) {
      // A kept edit keeps its old hash (it stays "modified"); a kept stranger's file is never adopted.
      if (written.has(file) || file.state === "unchanged") files[file.target] = file.hash;
    }
    const variants = { ...previous?.variants, ...chosenVariants(plan, block.name) };
    lock.blocks[block.name] = {
      version: cliVersion(),
      frameworks: [...new Set([...(previous?.frameworks ?? []), ...plan.frameworks])].sort(),
      tests: plan.tests || previous?.tests === true,
      files,
      ...(Object.keys(variants).length ? { variants } : {}),
      ...(plan.tables[block.name] === undefined ? {} : { table: plan.tables[block.name] }),
      ...(block.origin ? { registry: block.origin } : {}),
    };
  }
  for (const migration of plan.migrations) {
    const file = migration.files.find((candidate) => candidate.path.endsWith(".sql"));
    lock.migrations[migration.table] = migration.existing ?? file?.path ?? "";
  }
  return lock;
}

/**
 * The block's variant files as block.json names them (target -> source), tests aside: each comes with its file.
 *
 * @example
 * chosenVariants(plan, "idempotency"); // { "idempotency/setup/database.ts": "idempotency/setup/database-kysely.ts", ... }
 */
export function chosenVariants(
  plan: { config: { dir: string }; files: PlannedFile[] },
  block: string,
): Record<string, string> {
  const dir = path.posix.normalize(plan.config.dir);
  return Object.fromEntries(
    plan.files
      .filter((file) => file.block === block && file.variant && !/\.test\.[cm]?[jt]sx?$/.test(file.source))
      .map((file) => [path.posix.relative(dir, file.target), file.source]),
  );
}
