// Prints an add plan for people (what happens to each file, packages, migration) and as JSON.
import { highlighter } from "../utils/highlighter.js";
import { logger } from "../utils/logger.js";
import { colourDiff, unifiedDiff } from "../utils/unified-diff.js";
import { installCommands } from "./install.js";
import type { AddPlan } from "./plan-add.js";
import type { PlannedFile } from "./plan-files.js";
import { shouldWrite } from "./write-plan.js";

export type Replace = { modified: boolean; conflicts: boolean };

const MARKS = { create: "+", update: "~", unchanged: "=", modified: "!", conflict: "!" } as const;

/**
 * @example
 * reportPlan(plan, { modified: false, conflicts: false }, { dryRun: true });
 */
export function reportPlan(plan: AddPlan, replace: Replace, { dryRun }: { dryRun: boolean }): void {
  const { config } = plan;
  const imports = config.alias ? `alias ${config.alias}` : "relative imports";
  const style = config.moduleStyle === "nodenext" ? "with .js suffixes" : "extensionless";
  logger.log(
    `${highlighter.path(plan.blocks.map((block) => block.name).join(", "))} -> ${highlighter.path(config.dir)} (${imports}, ${style})`,
  );
  logger.log(`frameworks: ${plan.frameworks.join(", ") || "none (core only)"}${plan.tests ? "" : ", without tests"}`);
  const choices = featureChoices(plan);
  if (choices.length) logger.log(`features: ${choices.join(", ")} (pass these flags to choose otherwise)`);
  for (const note of plan.notes) logger.warn(note);
  logger.break();
  const unchanged = plan.files.filter((file) => file.state === "unchanged");
  for (const file of plan.files.filter((candidate) => candidate.state !== "unchanged")) {
    logger.log(`  ${MARKS[file.state]} ${describe(file, replace)} ${file.target}`);
  }
  if (unchanged.length) logger.log(highlighter.dim(`  = ${unchanged.length} file(s) already identical, skipped`));
  for (const migration of plan.migrations) {
    const line = migration.existing
      ? highlighter.dim(`  = migration for ${migration.table} already in ${migration.existing}`)
      : migration.files.map((file) => `  + ${highlighter.success("migration")} ${file.path}`).join("\n");
    logger.log(line);
    for (const note of migration.notes) logger.warn(note);
  }
  if (plan.build.kind !== "none" || plan.build.message) {
    logger.break();
    const line = `build: ${plan.build.kind === "edit" ? (dryRun ? "would write " : "writes ") : ""}${plan.build.message}`;
    if (plan.build.kind === "manual") logger.warn(line);
    else logger.log(line);
  }
  const commands = installCommands(config.packageManager, plan.dependencies);
  if (commands.length) {
    logger.break();
    logger.log(dryRun ? "would install:" : "packages:");
    for (const command of commands) logger.log(`  ${highlighter.code(command.join(" "))}`);
  }
  for (const file of plan.files.filter(
    (candidate) => candidate.state === "modified" || candidate.state === "conflict",
  )) {
    logger.break();
    const why =
      file.state === "modified" ? "you changed this file since `blocks add`" : "this file was not written by blocks";
    const verdict = shouldWrite(file, replace) ? "it will be REPLACED" : "it is kept; pass --overwrite to replace it";
    logger.warn(`${file.target}: ${why}; ${verdict}. Registry version vs yours:`);
    logger.log(colourDiff(unifiedDiff(file.target, file.content, file.current ?? "")));
  }
}

function describe(file: PlannedFile, replace: Replace): string {
  if (file.owned) return highlighter.success("yours    ");
  if (file.state === "create") return highlighter.success("create   ");
  if (file.state === "update") return highlighter.info("update   ");
  return shouldWrite(file, replace) ? highlighter.error("overwrite") : highlighter.warn("keep     ");
}

/**
 * The machine-readable plan or result printed by --json.
 *
 * @example
 * printJson(planJson(plan, replace, { dryRun: true, installed: false }));
 */
export function planJson(plan: AddPlan, replace: Replace, outcome: { dryRun: boolean; installed: boolean }) {
  return {
    ok: true,
    dryRun: outcome.dryRun,
    root: plan.root,
    dir: plan.config.dir,
    blocks: plan.blocks.map((block) => block.name),
    frameworks: plan.frameworks,
    features: plan.features,
    notes: plan.notes,
    build:
      plan.build.kind === "edit"
        ? { kind: "edit", message: plan.build.message, files: plan.build.edits.map((edit) => edit.file) }
        : plan.build,
    files: plan.files.map((file) => ({
      target: file.target,
      source: file.source,
      state: file.state,
      write: shouldWrite(file, replace),
    })),
    dependencies: plan.dependencies,
    install: {
      commands: installCommands(plan.config.packageManager, plan.dependencies).map((command) => command.join(" ")),
      ran: outcome.installed,
    },
    migrations: plan.migrations.map((migration) => ({
      table: migration.table,
      files: migration.files.map((file) => file.path),
      existing: migration.existing ?? null,
    })),
  };
}

/** One entry per flag, as the user would pass it: `--cache redis`, `--store postgres`, `--client drizzle+kysely`. */
function featureChoices(plan: AddPlan): string[] {
  const flags = new Map<string, { on: string[]; off: string }>();
  for (const [name, feature] of plan.blocks.flatMap((block) => Object.entries(block.features ?? {}))) {
    const flag = flags.get(feature.flag ?? name) ?? { on: [], off: feature.off ?? "none" };
    if (plan.features.includes(name) && !flag.on.includes(feature.choice)) flag.on.push(feature.choice);
    flags.set(feature.flag ?? name, flag);
  }
  return [...flags].map(([flag, { on, off }]) => `--${flag} ${on.length ? on.join("+") : off}`);
}
