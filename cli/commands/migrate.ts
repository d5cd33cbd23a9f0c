// `blocks migrate`: writes (or prints, or applies) the migration rendered from the block's schema for its
// store's database (PostgreSQL, MySQL, SQLite), or, for a DynamoDB store, its table definition; a RedisStore has none, and is told so.
import { existsSync } from "node:fs";
import path from "node:path";
import { Command } from "commander";
import { recordedFeatures } from "../add/choose-features.js";
import { sqliteClientOf, type SqliteClientName } from "../migrate/sqlite-client.js";
import { CONFIG_FILE, readConfig } from "../config/blocks-config.js";
import { readLock } from "../config/lock-file.js";
import { applyDynamoDbTable, type DynamoDbApplyResult } from "../migrate/apply-dynamodb-table.js";
import { applyMigration, migrationFiles, type ApplyResult } from "../migrate/apply-migration.js";
import { blockStore, blockTable, storeFeatures } from "../migrate/block-store.js";
import { applyDialectMigration } from "../migrate/apply-dialect-migration.js";
import { storeDatabase } from "../migrate/dialect-connection.js";
import { planDialectMigration, unsupportedLayout, type DialectMigrationPlan } from "../migrate/dialect-migration.js";
import { planDynamoDbTable, type DynamoDbTablePlan } from "../migrate/dynamodb-table.js";
import { detectMigrations } from "../migrate/detect-layout.js";
import { planMigrations } from "../migrate/render-migration.js";
import { validTable } from "../migrate/schemas.js";
import { writeMigrations, writeTables } from "../migrate/write-migrations.js";
import { declaredPackages, readPackageJson } from "../project/package-json.js";
import { loadRegistry } from "../registry/manifest.js";
import type { RegistryBlock } from "../registry/types.js";
import { BlocksError } from "../utils/errors.js";
import { handleError } from "../utils/handle-error.js";
import { configureOutput, logger, printJson } from "../utils/logger.js";

export type MigrateOptions = {
  /** Only this block's migration (default: every added block with a table). */
  block?: string | undefined;
  cwd?: string;
  /** Default: the table `add` recorded in the lock, else the block's. */
  table?: string;
  print?: boolean;
  apply?: boolean;
  databaseUrl?: string;
  /** `postgres`, `mysql`, `sqlite`, `dynamodb` or `redis` (no schema): which store's schema (default: the one chosen at `add`). */
  store?: string;
  /** A DynamoDB endpoint for `--apply` (default: $AWS_ENDPOINT_URL_DYNAMODB, else the region's). */
  endpoint?: string;
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
      suggestion: `Blocks with a table: ${registry.blocks
        .filter((block) => block.migration)
        .map((block) => block.name)
        .join(", ")}.`,
    });
  }
  const blocks = registry.blocks.filter(
    (block) =>
      block.migration &&
      (options.block
        ? block.name === options.block
        : Object.keys(lock.blocks).length === 0 || block.name in lock.blocks),
  );
  const store = storeChoice(blocks, options.store);
  const stores = blocks.map((block) => ({ block, store: blockStore(block, lock.blocks[block.name], store) }));
  const tableOf = (block: RegistryBlock) => blockTable(block, lock, options.table);
  const sqlBlocks = stores.filter((entry) => entry.store.kind === "sql").map((entry) => entry.block);
  // The blocks whose store keeps no schema (RedisStore): said once, never a PostgreSQL migration they would not use.
  const noSchema = stores.filter((entry) => entry.store.kind === "none").map((entry) => entry.block.name);
  for (const { block, store: chosen } of stores) {
    const name = chosen.kind === "none" ? chosen.feature.description.split(":")[0] : "";
    if (chosen.kind === "none")
      logger.info(
        `${block.name}: nothing to migrate: its store, ${name} (--store ${chosen.feature.choice}), keeps no schema.`,
      );
  }
  for (const block of options.table ? sqlBlocks : []) validTable(block.name, options.table as string);
  if (options.table && blocks.length > 1) {
    throw new BlocksError(
      "INVALID_OPTION",
      `--table names one table, but ${blocks.map((block) => block.name).join(" and ")} each have their own.`,
      {
        suggestion: "Name the block: `blocks migrate <block> --table <name>`.",
      },
    );
  }
  const postgresRefusal = sqlBlocks[0] && unsupportedLayout(sqlBlocks[0].name, "postgresql", target);
  if (postgresRefusal && !options.print) throw postgresRefusal;
  const plans = planMigrations(
    sqlBlocks.map((block) => ({ root, block: block.name, table: tableOf(block), target, lock })),
  );
  const tables: DynamoDbTablePlan[] = [];
  for (const { block, store: chosen } of stores) {
    if (chosen.kind === "dynamodb")
      tables.push(
        await planDynamoDbTable({ root, registry, block: block.name, feature: chosen.feature, table: tableOf(block) }),
      );
  }
  const dialects: Array<{ plan: DialectMigrationPlan; client: SqliteClientName; entry: string | undefined }> = [];
  for (const { block, store: chosen } of stores) {
    if (chosen.kind !== "dialect") continue;
    const refusal = unsupportedLayout(block.name, chosen.feature.sqlSchema.dialect, target);
    if (refusal && !options.print) throw refusal;
    const plan = await planDialectMigration({
      root,
      registry,
      block: block.name,
      feature: chosen.feature,
      table: tableOf(block),
      target: refusal ? { ...target, layout: "sql" } : target,
      lock,
    });
    dialects.push({
      plan,
      client: sqliteClientOf(recordedFeatures(block, lock.blocks[block.name])),
      entry: block.setup?.entry,
    });
  }

  if (options.print) {
    process.stdout.write(
      [
        ...plans.map((plan) => plan.sql),
        ...dialects.map(({ plan }) => plan.sql),
        ...tables.map((table) => `${JSON.stringify(table.definition, null, 2)}\n`),
      ].join("\n"),
    );
    return {
      ok: true,
      layout: target.layout,
      written: [] as string[],
      existing: [] as string[],
      applied: [] as Array<ApplyResult | DynamoDbApplyResult>,
      noSchema,
    };
  }
  const written = [
    ...(await writeMigrations(root, [...plans, ...dialects.map(({ plan }) => plan)], lock)),
    ...(await writeTables(root, tables, { hint: !options.apply })),
  ];
  const applied: Array<ApplyResult | DynamoDbApplyResult> = [];
  if (options.apply) {
    for (const plan of plans) {
      const files = migrationFiles(plan);
      if (!files.length) throw new BlocksError("MIGRATION_FAILED", `No SQL file was written for ${plan.table}.`);
      const url = options.databaseUrl ?? process.env.DATABASE_URL;
      const result = await applyMigration(url, plan, { root, files });
      logger.success(`${appliedLine(plan.table, result)} on ${postgresLabel(url)}, from ${files.join(", ")}.`);
      applied.push(result);
    }
    for (const { plan, client, entry } of dialects) {
      const files = migrationFiles(plan);
      if (!files.length) throw new BlocksError("MIGRATION_FAILED", `No SQL file was written for ${plan.table}.`);
      const database = storeDatabase(root, plan.dialect, client, process.env, options.databaseUrl);
      const result = await applyDialectMigration(plan, { root, files, database });
      logger.success(
        `${appliedLine(plan.table, result)} on ${database?.label ?? "the store's database"}, from ${files.join(", ")}.`,
      );
      if (database?.fallback) {
        logger.warn(
          `${database.variable} is not set: the tables went into ${database.label}, the wiring's default file. If the app passes its own database to ${entry ?? "the block's wiring"}, set the variable to that file and run this again.`,
        );
      }
      applied.push(result);
    }
    for (const table of tables) {
      const result = await applyDynamoDbTable(table, { root, endpoint: options.endpoint });
      logger.success(
        result.alreadyApplied
          ? `DynamoDB table ${result.table}: already there, with the store's keys.`
          : `DynamoDB table ${result.table}: created.`,
      );
      if (result.ttl === "not enabled") {
        logger.warn(
          `DynamoDB table ${result.table}: TTL could not be enabled (${result.ttlError}). The store still treats expired items as absent, ` +
            `but nothing deletes them: enable it with \`aws dynamodb update-time-to-live --cli-input-json file://${table.paths.updateTimeToLive}\`.`,
        );
      }
      applied.push(result);
    }
  }
  const existing = [
    ...[...plans, ...dialects.map(({ plan }) => plan)].flatMap((plan) => plan.existing ?? []),
    ...tables.filter((table) => !table.files.length).map((table) => table.paths.createTable),
  ];
  return { ok: true, layout: target.layout, written, existing, applied, noSchema };
}

/** `--store`: one of the blocks' store choices (`postgres`, `redis`, `dynamodb`). */
function storeChoice(blocks: RegistryBlock[], store: string | undefined): string | undefined {
  if (store === undefined) return undefined;
  const features = blocks.flatMap((block) => storeFeatures(block).map(([, feature]) => feature));
  const accepted = [...new Set(features.flatMap((feature) => [feature.choice, ...(feature.off ? [feature.off] : [])]))];
  if (accepted.includes(store)) return store;
  throw new BlocksError(
    "INVALID_OPTION",
    `--store ${store}: ${accepted.length ? `expected ${accepted.join(", ")}` : "no block here has a choice of store"}.`,
    {
      suggestion: "Leave --store out to use the store chosen at `blocks add`.",
    },
  );
}

export const migrate = new Command("migrate")
  .description(
    "write the migration (PostgreSQL, MySQL or SQLite; for a DynamoDB store, the table definition) of every added block that has a table; --apply runs what is on disk",
  )
  .argument("[block]", "only this block's migration (default: every added block with a table)")
  .option(
    "-t, --table <name>",
    "table name (lower-case identifier, optionally schema-qualified; default: the one `add --table` recorded, else the block's)",
  )
  .option("-p, --print", "print the SQL (a DynamoDB table: its JSON) to stdout and write nothing")
  .option(
    "--apply",
    "also run the migration file (as it is on disk, your edits included) on the store's database, once per table (PostgreSQL and SQLite in one transaction); a DynamoDB table is created from its JSON files",
  )
  .option(
    "--database-url <url>",
    "database to apply to (default: $DATABASE_URL; a MySQL store: $MYSQL_URL; a SQLite store: $SQLITE_PATH, or $LIBSQL_URL on libSQL, else ./data/idempotency.db)",
  )
  .option(
    "--store <store>",
    "postgres, mysql, sqlite, dynamodb or redis (which has no schema): which store's table (default: the store chosen at add)",
  )
  .option(
    "--endpoint <url>",
    "DynamoDB endpoint for --apply, e.g. a local one (default: $AWS_ENDPOINT_URL_DYNAMODB, else the AWS region's)",
  )
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

function appliedLine(table: string, result: ApplyResult): string {
  return result.alreadyApplied
    ? `${table}: already up to date (every table was there; the files ran again, safely)`
    : `${table}: applied`;
}

/** Where DATABASE_URL points, without its credentials. */
function postgresLabel(url: string | undefined): string {
  try {
    const parsed = new URL(url ?? "");
    return `${parsed.host}${parsed.pathname} (${url === process.env.DATABASE_URL ? "DATABASE_URL" : "--database-url"})`;
  } catch {
    return "DATABASE_URL";
  }
}
