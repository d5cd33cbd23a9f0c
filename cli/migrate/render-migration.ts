// Renders a block's migration into the project's layout, or finds the one already written for that table.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Lock } from "../config/lock-file.js";
import { insideProject } from "../utils/files.js";
import type { MigrationTarget } from "./detect-layout.js";
import { schemaOf, validTable, type BlockSchema } from "./schemas.js";

export type RenderedFile = { path: string; content: string };

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
  notes: string[];
};

export type MigrationInput = { root: string; block: string; table: string; target: MigrationTarget; lock: Lock; now?: Date };

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

function renderMigration(input: MigrationInput, schema: BlockSchema): MigrationPlan {
  const table = validTable(input.block, input.table);
  const statements = schema.module.schemaStatements(table);
  const sql = statements.map((statement) => `${statement};\n`).join("\n");
  const base = { block: input.block, table, target: input.target, statements, sql, notes: [] as string[] };
  const existing = findExisting(input, table);
  if (existing) return { ...base, files: [], existing };

  const now = input.now ?? new Date();
  const slug = `create_${table.replace(/\./g, "_")}`;
  const dir = input.target.migrations;
  const title = `Create ${table} (${schema.title}).`;
  const plain = render(schema.template, { title, up: sql.trimEnd() });
  switch (input.target.layout) {
    case "node-pg-migrate": {
      const down = schema.module.dropStatements(table).map((statement) => `${statement};`).join("\n");
      return { ...base, files: [{ path: `${dir}/${now.getTime()}_${slug.replace(/_/g, "-")}.sql`, content: render(schema.nodePgMigrateTemplate, { title, up: sql.trimEnd(), down }) }] };
    }
    case "prisma":
      return {
        ...base,
        files: [{ path: `${dir}/${stamp(now)}_${slug}/migration.sql`, content: plain }],
        notes: [`Prisma does not know these tables: add them to schema.prisma (\`prisma db pull\` after applying), or \`prisma migrate dev\` will want to drop them.`],
      };
    case "drizzle":
      return drizzle(input, base, { dir, slug, title, statements, now });
    default:
      return { ...base, files: [{ path: `${dir}/${stamp(now)}_${slug}.sql`, content: plain }] };
  }
}

/** drizzle-kit runs only what its journal lists, so the journal gets an entry beside the SQL file. */
function drizzle(input: MigrationInput, base: Omit<MigrationPlan, "files">, args: { dir: string; slug: string; title: string; statements: string[]; now: Date }): MigrationPlan {
  const journalPath = `${args.dir}/meta/_journal.json`;
  const journalFile = path.join(input.root, journalPath);
  const journal = existsSync(journalFile)
    ? (JSON.parse(readFileSync(journalFile, "utf8")) as { entries: Array<Record<string, unknown>> })
    : undefined;
  const idx = journal?.entries.length ?? 0;
  const tag = `${String(idx).padStart(4, "0")}_${args.slug}`;
  const body = `-- ${args.title}\n${args.statements.map((statement) => `${statement};`).join("\n--> statement-breakpoint\n")}\n`;
  const files: RenderedFile[] = [{ path: `${args.dir}/${tag}.sql`, content: body }];
  if (journal) {
    journal.entries.push({ idx, version: "7", when: args.now.getTime(), tag, breakpoints: true });
    files.push({ path: journalPath, content: `${JSON.stringify(journal, null, 2)}\n` });
  }
  const notes = journal ? [] : [`No ${journalPath} yet: run the SQL file with your own tooling, or let drizzle-kit create the journal first.`];
  return { ...base, files, notes };
}

function findExisting(input: MigrationInput, table: string): string | undefined {
  const recorded = input.lock.migrations[table];
  if (recorded && existsSync(path.join(input.root, recorded))) return recorded;
  const dir = path.join(input.root, input.target.migrations);
  if (!existsSync(dir)) return undefined;
  const slug = table.replace(/\./g, "_");
  const pattern = new RegExp(`create[_-]${slug.replace(/_/g, "[_-]")}(?:\\.sql)?$`);
  const hit = readdirSync(dir).find((name) => pattern.test(name));
  if (!hit) return undefined;
  const hitPath = `${input.target.migrations}/${hit}`;
  return input.target.layout === "prisma" ? `${hitPath}/migration.sql` : hitPath;
}

function render(template: string, values: Record<string, string>): string {
  const text = readFileSync(template, "utf8");
  return text.replace(/\{\{(\w+)\}\}/g, (_, key: string) => values[key] ?? "");
}

/** UTC `YYYYMMDDHHMMSS`, the prefix Prisma and most SQL runners sort by. */
function stamp(date: Date): string {
  return date.toISOString().replace(/[-:T]/g, "").slice(0, 14);
}
