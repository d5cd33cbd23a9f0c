// `blocks add <block...>`: vendors blocks with rewritten imports, packages, migration and maintenance job.
import { Command } from "commander";
import { installDependencies } from "../add/install.js";
import type { MigrationLayout } from "../config/blocks-config.js";
import { planAdd, type AddPlan, type AddPlanOptions } from "../add/plan-add.js";
import { planJson, reportPlan, type Replace } from "../add/report-plan.js";
import { vitestLeavesOut } from "../add/vitest-include.js";
import { shouldWrite, writePlan } from "../add/write-plan.js";
import { execCommand, localExecCommand } from "../project/package-manager.js";
import { handleError } from "../utils/handle-error.js";
import { highlighter } from "../utils/highlighter.js";
import { configureOutput, logger, printJson } from "../utils/logger.js";
import { cancelled, decide } from "../utils/prompt.js";

export type AddOptions = AddPlanOptions & { overwrite?: boolean; install?: boolean; json?: boolean; silent?: boolean };

/**
 * Plans, asks what must be asked, writes, installs. Returns what `--json` prints.
 *
 * @example
 * await runAdd({ blocks: ["idempotency"], cwd: "/app", yes: true, install: false });
 */
export async function runAdd(options: AddOptions) {
  const plan = await planAdd(options);
  if (options.dryRun) {
    const replace = { modified: options.overwrite === true, conflicts: options.overwrite === true };
    reportPlan(plan, replace, { dryRun: true });
    logger.break();
    logger.info("Dry run: nothing was written.");
    return planJson(plan, replace, { dryRun: true, installed: false });
  }
  const replace = await decideConflicts(plan, options);
  reportPlan(plan, replace, { dryRun: false });
  const buildEdits = plan.build.kind === "edit" ? plan.build.edits.length : 0;
  const writes =
    plan.files.filter((file) => shouldWrite(file, replace)).length +
    plan.migrations.reduce((n, m) => n + m.files.length, 0) +
    buildEdits;
  const install = options.install !== false;
  const packages = install ? plan.dependencies.dependencies.length + plan.dependencies.devDependencies.length : 0;
  logger.break();
  if (writes === 0 && packages === 0) {
    logger.success("Already up to date: nothing to write.");
    return planJson(plan, replace, { dryRun: false, installed: false });
  }
  const summary = [writes ? `write ${writes} file(s)` : "", packages ? `install ${packages} package(s)` : ""]
    .filter(Boolean)
    .join(" and ");
  if (
    !(await decide(
      {
        message: `Add ${plan.blocks.map((b) => b.name).join(", ")}: ${summary}?`,
        flag: "--yes (or --dry-run to only see the plan)",
      },
      options.yes,
    ))
  )
    cancelled();

  const { written } = await writePlan(plan, replace);
  logger.success(`Wrote ${written.length} file(s) and blocks.lock.json.`);
  if (packages) await installDependencies(plan.root, plan.config.packageManager, plan.dependencies);
  else if (!install && plan.dependencies.dependencies.length + plan.dependencies.devDependencies.length) {
    logger.warn("--no-install: install the packages listed above yourself.");
  }
  nextSteps(plan);
  return planJson(plan, replace, { dryRun: false, installed: packages > 0 });
}

/** Edited files are replaced only with --overwrite; strangers' files in the way need an answer. */
async function decideConflicts(plan: AddPlan, options: AddOptions): Promise<Replace> {
  if (options.overwrite) return { modified: true, conflicts: true };
  const conflicts = plan.files.filter((file) => file.state === "conflict");
  if (conflicts.length === 0) return { modified: false, conflicts: false };
  const message = `${conflicts.length} file(s) not written by blocks differ from the registry (${conflicts[0]?.target}${conflicts.length > 1 ? ", ..." : ""}). Replace them?`;
  const replace = await decide(
    { message, flag: "--overwrite to replace them, or --yes to keep yours,", yesAnswer: false },
    options.yes,
  );
  return { modified: false, conflicts: replace };
}

function nextSteps(plan: AddPlan): void {
  const exec = execCommand(plan.config.packageManager);
  logger.break();
  logger.log("Next:");
  for (const migration of plan.migrations) {
    const file = migration.existing ?? migration.files[0]?.path;
    const tool = TOOL_APPLY[migration.target.layout];
    // A migration in the project's tool's layout is applied the way the project applies its own.
    const own = tool ? `${highlighter.code(`${exec} ${tool}`)} (it is in its journal: ${file})` : `run ${file}`;
    logger.log(`  - create the table: ${own}, or ${highlighter.code(`${exec} blocks migrate --apply`)} (DATABASE_URL)`);
  }
  const dynamoDb = plan.blocks.some((block) =>
    Object.entries(block.features ?? {}).some(
      ([name, feature]) => feature.dynamoDbTable && plan.features.includes(name),
    ),
  );
  const dialect = plan.blocks
    .flatMap((block) => Object.entries(block.features ?? {}))
    .find(([name, feature]) => feature.sqlSchema && plan.features.includes(name))?.[1].sqlSchema?.dialect;
  if (dialect)
    logger.log(
      `  - create the tables: ${highlighter.code(`${exec} blocks migrate --apply`)} (${dialect === "mysql" ? "MYSQL_URL" : "SQLITE_PATH, or LIBSQL_URL on libSQL"}), or \`${exec} blocks migrate\` for their ${dialect === "mysql" ? "MySQL" : "SQLite"} migration alone`,
    );
  if (dynamoDb)
    logger.log(
      `  - create the DynamoDB table: ${highlighter.code(`${exec} blocks migrate --apply`)}, or \`${exec} blocks migrate\` for its CreateTable JSON`,
    );
  const setup = plan.files.find((file) => file.owned && file.target.endsWith("-setup.ts"));
  if (setup) {
    // What the wiring holds, in the block's own names (block.json's `setup.entry` and `doctor.maintenance`).
    const block = plan.blocks.find((candidate) => candidate.name === setup.block);
    const start = block?.doctor?.maintenance?.start;
    // The setup file only re-exports: what to call from it, and where the parts it composes live.
    const cron = plan.files.find((file) => file.owned && file.block === setup.block && file !== setup);
    const calls = [
      ...(block?.setup?.entry ? [`${block.setup.entry}()`] : []),
      ...(start ? [`${start}()${cron ? ` (or the cron entry ${highlighter.path(cron.target)})` : ""}`] : []),
    ];
    logger.log(
      `  - wire it into your app: import from ${highlighter.path(setup.target)}${calls.length ? ` and call ${calls.join(", ")}` : ""}; the parts it composes are yours to edit in ${highlighter.path(`${plan.config.dir}/${setup.block}/setup/`)} (\`update\` merges your edits)`,
    );
    // A Nest app already has its database client as a provider, and lifecycle hooks for the jobs and the close.
    if (plan.frameworks.includes("nestjs") && block?.setup?.entry && start) {
      const client = plan.features.includes("client-typeorm")
        ? `TypeOrmModule's DataSource, injected: ${block.setup.entry}({ db: dataSource })`
        : `the one your app provides, injected: ${block.setup.entry}({ db })`;
      logger.log(
        `  - on NestJS, a module provides the handler on your app's client (${client}), calls ${start}() on bootstrap and close() on shutdown: the NestJS module in ${highlighter.path(`${plan.config.dir}/${block.name}/README.md`)}`,
      );
    }
  }
  // A wiring that cannot be finished for the user (Prisma: where `prisma generate` put the client) says so in a comment.
  const toChange = plan.files.flatMap((file) => {
    const line = file.content.split("\n").findIndex((text) => text.includes("// TO CHANGE:"));
    return line >= 0 ? [`${file.target}:${line + 1}`] : [];
  })[0];
  if (toChange)
    logger.log(
      `  - ${highlighter.warn("before it runs")}, do what the TO CHANGE comment says: ${highlighter.path(toChange)}`,
    );
  if (plan.tests) {
    // The wiring's test (a variant, on the app's own client) is the only one that needs the app's server: said as it behaves.
    const testText = plan.files.find((file) => file.variant && file.target.endsWith(".test.ts"))?.content;
    const variable = testText === undefined ? undefined : /it\.skipIf\(!process\.env\.(\w+)\)/.exec(testText)?.[1];
    const where =
      testText === undefined
        ? ""
        : variable
          ? ` (the wiring's test skips itself until ${variable} is set)`
          : dialect === "sqlite"
            ? " (the wiring's test runs on a temporary SQLite file)"
            : " (the wiring's test runs on an embedded PostgreSQL, PGlite: no server needed)";
    const sample = plan.files.find((file) => file.target.endsWith(".test.ts"))?.target;
    const leftOut = sample === undefined ? undefined : vitestLeavesOut(plan.root, sample);
    if (leftOut)
      logger.log(
        `  - ${highlighter.warn("your tests")}: ${highlighter.path(leftOut.config)} runs only ${leftOut.include.join(", ")}; add "${plan.config.dir}/**/*.test.ts" to its test.include, or the command below finds no test file`,
      );
    logger.log(
      `  - run the block's tests: ${highlighter.code(`${localExecCommand(plan.config.packageManager)} vitest run ${plan.config.dir}`)}${where}`,
    );
  }
  for (const block of plan.blocks)
    logger.log(`  - read ${highlighter.path(`${plan.config.dir}/${block.name}/README.md`)}`);
}

/** How a project whose migrations are in this tool's layout applies them. */
const TOOL_APPLY: Partial<Record<MigrationLayout, string>> = {
  drizzle: "drizzle-kit migrate",
  prisma: "prisma migrate deploy",
  "node-pg-migrate": "node-pg-migrate up",
};

export const add = new Command("add")
  .description("copy blocks into your project, with their tests, packages, migration and maintenance job")
  .argument("<blocks...>", "block names (see `blocks list`)")
  .option("-y, --yes", "answer every prompt with its default (keeps files you changed)")
  .option("-o, --overwrite", "replace files you changed since `add` (a diff is shown first)")
  .option(
    "--framework <names>",
    "adapters to add, comma-separated: express, fastify, hono, koa, nestjs, fetch (Next.js, Bun, Deno), or none (default: detected from package.json)",
  )
  .option(
    "--cache <choice>",
    "Redis cache in front of the store: redis or none (default: redis when package.json declares ioredis; never with --store redis)",
  )
  .option(
    "--metrics <choice>",
    "Prometheus metrics: prometheus or none (default: prometheus when package.json declares prom-client)",
  )
  .option(
    "--store <choice>",
    "the one store copied, with its packages: postgres (records in PostgreSQL, with its migration), redis (records in Redis), dynamodb (records in DynamoDB), mysql (records in MySQL, on MYSQL_URL) or sqlite (records in SQLite, on better-sqlite3, or libSQL when package.json declares @libsql/client) (default: the store the blocks already added use, else postgres, or dynamodb when package.json declares the AWS SDK)",
  )
  .option(
    "--client <choice>",
    "database-client adapter of --store postgres: pg, drizzle, kysely, postgres-js, prisma, typeorm or knex; of --store mysql: drizzle-mysql or kysely-mysql (else mysql2 itself); of --store sqlite: better-sqlite3 or libsql; of --store redis: ioredis or node-redis; none is pg (default: those package.json declares, else pg; PGlite comes with pg only)",
  )
  .option("--no-tests", "leave the block's tests out")
  .option("--no-install", "do not install npm packages (they are listed instead)")
  .option("--table <name>", "table name for the migration", undefined)
  .option("--dry-run", "print the plan and write nothing")
  .option("--json", "print the plan or result as JSON")
  .option("-c, --cwd <path>", "the project folder (default: the current one)")
  .option("--registry <path>", "use another registry folder (for block authors)")
  .option("-s, --silent", "print nothing but errors")
  .action(async (blocks: string[], opts: Omit<AddOptions, "blocks">) => {
    configureOutput({ silent: opts.silent || opts.json });
    try {
      const result = await runAdd({ ...opts, blocks });
      if (opts.json) printJson(result);
    } catch (err) {
      handleError(err, opts);
    }
  });
