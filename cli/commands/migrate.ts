// `blocks migrate`: writes (or prints, or applies) the PostgreSQL migration rendered from the block's schema.
import { existsSync } from "node:fs";
import path from "node:path";
import { Command } from "commander";
import { CONFIG_FILE, readConfig } from "../config/blocks-config.js";
import { readLock, writeLock } from "../config/lock-file.js";
import { applyMigration, migrationFile, type ApplyResult } from "../migrate/apply-migration.js";
import { detectMigrations } from "../migrate/detect-layout.js";
import { planMigration, type MigrationPlan } from "../migrate/render-migration.js";
import { validTable } from "../migrate/schemas.js";
import { declaredPackages, readPackageJson } from "../project/package-json.js";
import { loadRegistry } from "../registry/manifest.js";
import { BlocksError } from "../utils/errors.js";
import { assertWritable, insideProject, writeProjectFile } from "../utils/files.js";
import { handleError } from "../utils/handle-error.js";
import { highlighter } from "../utils/highlighter.js";
import { configureOutput, logger, printJson } from "../utils/logger.js";

export type MigrateOptions = {
  /** Only this block's migration (default: every added block with a table). */
  block?: string | undefined;
  cwd?: string;
  table?: string;
  print?: boolean;
  apply?: boolean;
  databaseUrl?: string;
  registry?: string;
  json?: boolean;
  silent?: boolean;
};

/**
 * @example
 * await runMigrate({ cwd: "/app", apply: true }); // writes the file if missing, then applies it
 */
export async function runMigrate(options: MigrateOptions) {
  const root = path.resolve(options.cwd ?? process.cwd());
  const pkg = await readPackageJson(root);
  const target = existsSync(path.join(root, CONFIG_FILE))
    ? (await readConfig(root)).database
    : detectMigrations(root, declaredPackages(pkg), (pkg as { scripts?: Record<string, string> }).scripts);
  const lock = await readLock(root);
  const registry = await loadRegistry(options.registry);
  if (options.block && !registry.blocks.some((block) => block.name === options.block && block.migration)) {
    throw new BlocksError("UNKNOWN_BLOCK", `No block named "${options.block}" has a table.`, {
      suggestion: `Blocks with a table: ${registry.blocks.filter((block) => block.migration).map((block) => block.name).join(", ")}.`,
    });
  }
  const blocks = registry.blocks.filter(
    (block) => block.migration && (options.block ? block.name === options.block : Object.keys(lock.blocks).length === 0 || block.name in lock.blocks),
  );
  for (const block of options.table ? blocks : []) validTable(block.name, options.table as string);
  if (options.table && blocks.length > 1) {
    throw new BlocksError("INVALID_OPTION", `--table names one table, but ${blocks.map((block) => block.name).join(" and ")} each have their own.`, {
      suggestion: "Name the block: `blocks migrate <block> --table <name>`.",
    });
  }
  const plans = blocks
    .map((block) => planMigration({ root, block: block.name, table: options.table ?? block.migration?.table ?? "", target, lock }));

  if (options.print) {
    process.stdout.write(plans.map((plan) => plan.sql).join("\n"));
    return { ok: true, layout: target.layout, written: [] as string[], existing: [] as string[], applied: [] as ApplyResult[] };
  }
  const written = await writeMigrations(root, plans, lock);
  const applied: ApplyResult[] = [];
  if (options.apply) {
    for (const plan of plans) {
      const file = migrationFile(plan);
      if (!file) throw new BlocksError("MIGRATION_FAILED", `No SQL file was written for ${plan.table}.`);
      const result = await applyMigration(options.databaseUrl ?? process.env.DATABASE_URL, plan, { root, file });
      logger.success(result.alreadyApplied ? `${plan.table}: already up to date (nothing changed).` : `${plan.table}: created.`);
      applied.push(result);
    }
  }
  return { ok: true, layout: target.layout, written, existing: plans.flatMap((plan) => plan.existing ?? []), applied };
}

async function writeMigrations(root: string, plans: MigrationPlan[], lock: Awaited<ReturnType<typeof readLock>>): Promise<string[]> {
  const written: string[] = [];
  for (const plan of plans) {
    if (plan.existing) {
      logger.info(`Migration for ${plan.table} already written: ${plan.existing}`);
      continue;
    }
    const targets = plan.files.map((file) => ({ ...file, absolute: insideProject(root, file.path) }));
    for (const file of targets) await assertWritable(file.absolute);
    for (const file of targets) {
      await writeProjectFile(file.absolute, file.content);
      logger.success(`Wrote ${highlighter.path(file.path)}`);
      written.push(file.path);
    }
    for (const note of plan.notes) logger.warn(note);
    lock.migrations[plan.table] = plan.files[0]?.path ?? "";
  }
  if (written.length) await writeLock(root, lock);
  return written;
}

export const migrate = new Command("migrate")
  .description("write the PostgreSQL migration of every added block that has a table; --apply runs the file on disk")
  .argument("[block]", "only this block's migration (default: every added block with a table)")
  .option("-t, --table <name>", "table name (lower-case identifier, optionally schema-qualified)")
  .option("-p, --print", "print the SQL to stdout and write nothing")
  .option("--apply", "also run the migration file (as it is on disk, your edits included) on DATABASE_URL, in one transaction")
  .option("--database-url <url>", "database to apply to (default: $DATABASE_URL)")
  .option("--json", "print the result as JSON")
  .option("-c, --cwd <path>", "the project folder (default: the current one)")
  .option("--registry <path>", "use another registry folder (for block authors)")
  .option("-s, --silent", "print nothing but errors")
  .action(async (block: string | undefined, opts: MigrateOptions) => {
    configureOutput({ silent: opts.silent || opts.json || opts.print });
    try {
      const result = await runMigrate({ ...opts, block });
      if (opts.json && !opts.print) printJson(result);
    } catch (err) {
      handleError(err, opts);
    }
  });
