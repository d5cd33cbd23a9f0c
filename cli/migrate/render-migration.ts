// Renders a block's migration into the project's layout, or finds the one already written for that table.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Lock } from "../config/lock-file.js";
import { insideProject } from "../utils/files.js";
import type { MigrationTarget } from "./detect-layout.js";
import { drizzleMigration, JOURNAL } from "./drizzle-journal.js";
import type { RenderedFile } from "./rendered-file.js";
import { dropStatements, schemaOf, schemaStatements, type BlockSchema } from "./schemas.js";
import { tableMigrations, unwrittenStatements } from "./table-migrations.js";

export type MigrationPlan = {
  block: string;
  table: string;
  target: MigrationTarget;
  /** The statements `--apply` runs, each safe to repeat. */
  statements: string[];
  /** The up script, as `--print` shows it. */
  sql: string;
  /** Files to write; empty when `existing` already creates this table. */
  files: RenderedFile[];
  existing?: string;
  /** The table's migration files already on disk (its create and update migrations), in the order they run. */
  onDisk: string[];
  notes: string[];
};

export type MigrationInput = {
  root: string;
  block: string;
  table: string;
  target: MigrationTarget;
  lock: Lock;
  now?: Date;
  /** drizzle-kit's journal as a migration planned earlier in the same run left it (not yet on disk). */
  journal?: string;
};

/**
 * @example
 * const plan = planMigration({ root, block: "idempotency", table: "idempotency_records", target, lock });
 * plan.files[0]?.path; // "migrations/20260101120000_create_idempotency_records.sql"
 */
export function planMigration(input: MigrationInput): MigrationPlan {
  // The folder first (the drizzle journal is read from it), then every file: neither `add` nor `migrate` writes outside the project.
  insideProject(input.root, input.target.migrations);
  const plan = renderMigration(input, schemaOf(input.block));
  for (const file of plan.files) insideProject(input.root, file.path);
  return plan;
}

/**
 * Several blocks' migrations in one run, each planned after the one before: its own timestamp (one
 * second later, so every layout's runner sorts them in the order given) and drizzle-kit's journal as
 * the one before left it (one entry each; drizzle-kit runs only what the journal lists), written once.
 *
 * @example
 * planMigrations([idempotencyInput, rateLimiterInput]).flatMap((plan) => plan.files.map((file) => file.path));
 * // ["drizzle/0001_create_idempotency_records.sql", "drizzle/0002_create_rate_limits.sql", "drizzle/meta/_journal.json"]
 */
export function planMigrations(inputs: MigrationInput[]): MigrationPlan[] {
  const start = inputs[0]?.now ?? new Date();
  const plans: MigrationPlan[] = [];
  let journal: RenderedFile | undefined;
  for (const input of inputs) {
    const now = new Date(start.getTime() + plans.filter((plan) => plan.files.length > 0).length * 1000);
    const plan = planMigration({ ...input, now, ...(journal ? { journal: journal.content } : {}) });
    const planned = plan.files.find((file) => file.path.endsWith(JOURNAL));
    if (planned) {
      for (const earlier of plans) earlier.files = earlier.files.filter((file) => file !== journal);
      journal = planned;
    }
    plans.push(plan);
  }
  return plans;
}

function renderMigration(input: MigrationInput, schema: BlockSchema): MigrationPlan {
  const table = input.table;
  const statements = schemaStatements(schema, table);
  const sql = statements.map((statement) => `${statement};\n`).join("\n");
  const existing = findExisting(input, table);
  const onDisk = existing ? tableMigrations(input.root, input.target, table, existing) : [];
  const base = { block: input.block, table, target: input.target, statements, sql, onDisk, notes: [] as string[] };
  if (!existing)
    return {
      ...base,
      ...renderFiles(input, schema, {
        slug: `create_${table.replace(/\./g, "_")}`,
        title: `Create ${table} (${schema.title}).`,
        statements,
      }),
    };

  // A migration written by an older version lacks what the block added since (the store's function):
  // a second migration adds only that, and `--apply` runs it.
  const missing = unwrittenStatements(input.root, onDisk, statements);
  if (missing.length === 0) return { ...base, files: [], existing };
  const rendered = renderFiles(input, schema, {
    slug: `update_${table.replace(/\./g, "_")}`,
    title: `Update ${table} (${schema.title}).`,
    statements: missing,
    update: true,
  });
  return {
    ...base,
    statements: missing,
    sql: missing.map((statement) => `${statement};\n`).join("\n"),
    files: rendered.files,
    notes: [
      `${existing} predates part of the block's schema; ${rendered.files[0]?.path ?? "the new file"} adds it. Apply it before deploying this version of the block.`,
      ...rendered.notes,
    ],
  };
}

/** `update`: the file adds only `statements` to an earlier migration, and its down step drops only what they create. */
function renderFiles(
  input: MigrationInput,
  schema: BlockSchema,
  args: { slug: string; title: string; statements: string[]; update?: boolean },
): { files: RenderedFile[]; notes: string[] } {
  const { slug, title, statements } = args;
  const up = statements
    .map((statement) => `${statement};\n`)
    .join("\n")
    .trimEnd();
  const now = input.now ?? new Date();
  const dir = input.target.migrations;
  const plain = render(schema.template, { title, up });
  switch (input.target.layout) {
    case "node-pg-migrate": {
      const drops = dropStatements(schema, input.table);
      const down = (args.update ? dropsFor(drops, statements) : drops).map((statement) => `${statement};`).join("\n");
      return {
        files: [
          {
            path: `${dir}/${now.getTime()}_${slug.replace(/_/g, "-")}.sql`,
            content: render(schema.nodePgMigrateTemplate, { title, up, down }),
          },
        ],
        notes: [],
      };
    }
    case "prisma":
      return {
        files: [{ path: `${dir}/${stamp(now)}_${slug}/migration.sql`, content: plain }],
        notes: [
          `Prisma does not know these tables: add them to schema.prisma (\`prisma db pull\` after applying), or \`prisma migrate dev\` will want to drop them.`,
        ],
      };
    case "drizzle": {
      const journal = input.journal === undefined ? {} : { journal: input.journal };
      return {
        files: drizzleMigration({
          root: input.root,
          dir,
          slug,
          title,
          statements,
          now,
          dialect: "postgresql",
          ...journal,
        }),
        notes: [],
      };
    }
    default:
      return { files: [{ path: `${dir}/${stamp(now)}_${slug}.sql`, content: plain }], notes: [] };
  }
}

/** The drop statements of the objects `statements` create, for an update migration's down step. */
function dropsFor(drops: string[], statements: string[]): string[] {
  return drops.filter((drop) => {
    const [, kind, name] = /^DROP (\w+) IF EXISTS ([\w.]+)/i.exec(drop) ?? [];
    return statements.some((statement) =>
      new RegExp(
        `^CREATE (?:OR REPLACE )?(?:UNLOGGED )?${kind} (?:IF NOT EXISTS )?${name?.replace(".", "\\.")}\\b`,
        "i",
      ).test(statement),
    );
  });
}

/** The table's create migration (as the lock records it, or by its name), if one was written. */
function findExisting(input: MigrationInput, table: string): string | undefined {
  const recorded = input.lock.migrations[table];
  const created = tableMigrations(input.root, input.target, table).find((file) =>
    /create[_-][^/]*(?:\.sql|\/migration\.sql)$/.test(file),
  );
  if (recorded && existsSync(path.join(input.root, recorded)) && !isUpdate(recorded)) return recorded;
  return created ?? (recorded && existsSync(path.join(input.root, recorded)) ? recorded : undefined);
}

function isUpdate(file: string): boolean {
  return /update[_-][^/]*(?:\.sql|\/migration\.sql)$/.test(file);
}

function render(template: string, values: Record<string, string>): string {
  const text = readFileSync(template, "utf8");
  return text.replace(/\{\{(\w+)\}\}/g, (_, key: string) => values[key] ?? "");
}

/** UTC `YYYYMMDDHHMMSS`, the prefix Prisma and most SQL runners sort by. */
function stamp(date: Date): string {
  return date.toISOString().replace(/[-:T]/g, "").slice(0, 14);
}
