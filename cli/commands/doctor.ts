// `blocks doctor`: checks the project against the seed's rules, statically and (with DATABASE_URL) live.
import path from "node:path";
import { Command } from "commander";
import { recordedFeatures } from "../add/choose-features.js";
import { sqliteClientOf } from "../migrate/sqlite-client.js";
import { readConfig } from "../config/blocks-config.js";
import { readLock } from "../config/lock-file.js";
import type { Finding } from "../doctor/finding.js";
import { declaredPackages, readPackageJson } from "../project/package-json.js";
import { blockStore } from "../migrate/block-store.js";
import { loadRegistry } from "../registry/manifest.js";
import { handleError } from "../utils/handle-error.js";
import { highlighter } from "../utils/highlighter.js";
import { configureOutput, logger, printJson } from "../utils/logger.js";
import { spinner } from "../utils/spinner.js";

export type DoctorOptions = {
  cwd?: string;
  databaseUrl?: string | undefined;
  registry?: string;
  json?: boolean;
  silent?: boolean;
};

/**
 * Runs every check; `ok` is false (the command exits 1) when there is a finding.
 *
 * @example
 * const { findings } = await runDoctor({ cwd: "/app" });
 * findings[0]; // { rule: "route-user-id", file: "src/app.ts", line: 14, message, fix }
 */
export async function runDoctor(options: DoctorOptions) {
  const root = path.resolve(options.cwd ?? process.cwd());
  const config = await readConfig(root);
  const lock = await readLock(root);
  const pkg = (await readPackageJson(root)) as {
    scripts?: Record<string, string>;
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
  const registry = await loadRegistry(options.registry);
  const progress = spinner("Checking the project");
  // ts-morph loads in about a second: only doctor and add pay for it.
  const { loadProjectFiles } = await import("../doctor/project-files.js");
  const { checkRoutes } = await import("../doctor/check-routes.js");
  const { checkHandler } = await import("../doctor/check-handler.js");
  const { checkMaintenance } = await import("../doctor/check-maintenance.js");
  const { checkPackages } = await import("../doctor/check-packages.js");
  const { checkBuild } = await import("../doctor/check-build.js");
  const { checkMigration } = await import("../doctor/check-migration.js");
  const { checkConflicts } = await import("../doctor/check-conflicts.js");
  const project = loadProjectFiles(root, config.dir);
  const scripts = pkg.scripts ?? {};
  // Only blocks on PostgreSQL owe a migration: a RedisStore or DynamoDB project is never asked for one.
  const sqlRegistry = {
    ...registry,
    blocks: registry.blocks.filter((block) => blockStore(block, lock.blocks[block.name]).kind === "sql"),
  };
  const owesMigration = sqlRegistry.blocks.some((block) => block.migration && block.name in lock.blocks);
  const url = owesMigration ? (options.databaseUrl ?? process.env.DATABASE_URL) : undefined;
  // The names checked are the added blocks' own, from their declarations (block.json's `doctor`).
  const added = registry.blocks.filter((block) => block.name in lock.blocks);
  const routes = added.flatMap((block) => (block.doctor?.routes ? [block.doctor.routes] : []));
  const handlers = added.flatMap((block) => (block.doctor?.handler ? [block.doctor.handler] : []));
  const declared = declaredPackages(pkg);
  // A store on MySQL or SQLite is checked where its wiring looks (MYSQL_URL, SQLITE_PATH), not on DATABASE_URL.
  const { checkDialectTables, dialectTarget } = await import("../doctor/check-dialect-tables.js");
  const dialectChecks = added.flatMap((block) => {
    const store = blockStore(block, lock.blocks[block.name]);
    if (store.kind !== "dialect") return [];
    const table = lock.blocks[block.name]?.table ?? block.migration?.table ?? "";
    const wanted = {
      block: block.name,
      table,
      file: lock.migrations[table] ?? "blocks.lock.json",
      schema: store.feature.sqlSchema,
    };
    return [
      {
        wanted,
        // The function the app hands its own database to, named in the note below.
        entry: block.setup?.entry,
        target: dialectTarget(
          root,
          wanted.schema.dialect,
          sqliteClientOf(recordedFeatures(block, lock.blocks[block.name])),
        ),
      },
    ];
  });
  const dialectFindings: Finding[] = [];
  for (const { wanted, target } of dialectChecks)
    if (target) dialectFindings.push(...(await checkDialectTables(root, registry, wanted, target)));
  const findings: Finding[] = [
    ...checkRoutes(project, routes),
    ...handlers.flatMap((names) => checkHandler(project, declared, names)),
    ...checkMaintenance(project, registry, lock, config, scripts),
    ...(await checkPackages(root, lock, pkg)),
    ...checkBuild(root, config.dir, scripts),
    ...(await checkConflicts(root, lock)),
    ...(url ? await checkMigration(url, sqlRegistry, lock) : []),
    ...dialectFindings,
  ].sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  progress.succeed(`Checked ${project.files.length} file(s)`);
  const unchecked = [
    ...(owesMigration && !url ? ["DATABASE_URL is not set"] : []),
    ...dialectChecks
      .filter((check) => !check.target)
      .map(({ wanted }) =>
        wanted.schema.dialect === "mysql"
          ? "MYSQL_URL is not set"
          : "SQLITE_PATH (LIBSQL_URL on libSQL) is not set, and ./data/idempotency.db does not exist",
      ),
  ];
  // The default file is checked only as a guess: an app that hands the store its own database uses another one.
  const notes = dialectChecks.flatMap(({ entry, target }) =>
    target?.fallback
      ? [
          `${target.variable} is not set: checked ${target.label}, the wiring's default file. If the app passes its own database to ${entry ?? "the block's wiring"}, set ${target.variable} to that file.`,
        ]
      : [],
  );
  report(findings, { unchecked, notes });
  const checkedDatabase = Boolean(url) || dialectChecks.some((check) => check.target);
  return { ok: findings.length === 0, checkedDatabase, findings, notes };
}

function report(findings: Finding[], { unchecked, notes }: { unchecked: string[]; notes: string[] }): void {
  for (const item of findings) {
    logger.log(`${highlighter.path(`${item.file}:${item.line}`)} ${highlighter.error(item.rule)} ${item.message}`);
    logger.log(`  ${highlighter.info("fix:")} ${item.fix}`);
  }
  for (const reason of unchecked) logger.warn(`${reason}: the migration was not checked against the database.`);
  for (const note of notes) logger.warn(note);
  if (findings.length) logger.error(`${findings.length} finding(s).`);
  else logger.success("No findings: the project follows every rule doctor checks.");
}

export const doctor = new Command("doctor")
  .description(
    "check the project against the blocks' rules (getUserId, isPermanentError, requireKey, jobs, migration, logger/metrics, packages, build, cache TTL, unresolved update conflicts); exits 1 on a finding",
  )
  .option(
    "--database-url <url>",
    "PostgreSQL database to check the tables on (default: $DATABASE_URL; a MySQL store: $MYSQL_URL, a SQLite store: $SQLITE_PATH, or $LIBSQL_URL on libSQL)",
  )
  .option("--json", "print the findings as JSON")
  .option("-c, --cwd <path>", "the project folder (default: the current one)")
  .option("--registry <path>", "use another registry folder (for block authors)")
  .option("-s, --silent", "print nothing but errors")
  .action(async (opts: DoctorOptions) => {
    configureOutput({ silent: opts.silent || opts.json });
    try {
      const result = await runDoctor(opts);
      if (opts.json) printJson(result);
      if (!result.ok) process.exitCode = 1;
    } catch (err) {
      handleError(err, opts);
    }
  });
