// drizzle-kit's migrations folder: each migration a SQL file split by `--> statement-breakpoint`, listed in meta/_journal.json.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { DatabaseDialect } from "../config/blocks-config.js";
import type { RenderedFile } from "./rendered-file.js";

export const JOURNAL = "meta/_journal.json";
export const BREAKPOINT = "--> statement-breakpoint";

/**
 * drizzle-kit runs only what its journal lists, in the journal's order, and only entries whose `when`
 * is later than the last one it applied: the SQL file gets an entry, starting the journal (as
 * `drizzle-kit generate` would, for `dialect`) when the project has none yet. Each statement is sent
 * on its own, so a MySQL procedure body keeps its semicolons.
 *
 * @example
 * drizzleMigration({ root, dir: "drizzle", slug: "create_x", title: "Create x.", statements, now, dialect: "mysql" });
 * // [{ path: "drizzle/0003_create_x.sql", ... }, { path: "drizzle/meta/_journal.json", ... }]
 */
export function drizzleMigration(args: {
  root: string;
  dir: string;
  slug: string;
  title: string;
  statements: string[];
  now: Date;
  dialect: DatabaseDialect;
  /** The journal as a migration planned earlier in the same run left it (not yet on disk). */
  journal?: string;
}): RenderedFile[] {
  const journalPath = `${args.dir}/${JOURNAL}`;
  const journalFile = path.join(args.root, journalPath);
  const text = args.journal ?? (existsSync(journalFile) ? readFileSync(journalFile, "utf8") : undefined);
  const journal: { entries: Array<Record<string, unknown>> } =
    text === undefined ? { version: "7", dialect: args.dialect, entries: [] } : JSON.parse(text);
  const idx = journal.entries.length;
  const tag = `${String(idx).padStart(4, "0")}_${args.slug}`;
  const body = `-- ${args.title}\n${args.statements.map((statement) => `${statement};`).join(`\n${BREAKPOINT}\n`)}\n`;
  const latest = Math.max(0, ...journal.entries.map((entry) => (typeof entry.when === "number" ? entry.when : 0)));
  journal.entries.push({ idx, version: "7", when: Math.max(args.now.getTime(), latest + 1), tag, breakpoints: true });
  return [
    { path: `${args.dir}/${tag}.sql`, content: body },
    { path: journalPath, content: `${JSON.stringify(journal, null, 2)}\n` },
  ];
}
