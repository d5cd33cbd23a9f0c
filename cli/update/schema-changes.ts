// What an update does to a block's store schema: the SQL its migration is written from, before and after.
import type { Lock } from "../config/lock-file.js";
import type { PlannedFile } from "../add/plan-files.js";
import { blockStore, blockTable } from "../migrate/block-store.js";
import { importModuleText } from "../migrate/schemas.js";
import type { RegistryBlock } from "../registry/types.js";
import { readBase } from "./base-store.js";

/** Each statement on one line, cut after 120 characters: enough to name the object it creates or alters. */
export type SchemaChange = {
  block: string;
  table: string;
  /** Statements the new version has and the old one had not: `blocks migrate` writes them in an update migration. */
  added: string[];
  /** The same first line with another definition (a function's body, a table's columns). */
  changed: string[];
  /** Statements the new version no longer has: nothing drops what they created. */
  removed: string[];
};

/**
 * For each block whose store has a schema module among its vendored files, compares what that module
 * renders for the project's table in the version `add` wrote (its recorded base, else your copy) and in
 * the registry's. A block whose store keeps no schema (Redis) or whose schema did not move is left out.
 *
 * @example
 * await schemaChanges(root, lock, blocks, planned); // [{ block: "idempotency", table: "idempotency_records", added: ["ALTER TABLE ..."], changed: [], removed: [] }]
 */
export async function schemaChanges(
  root: string,
  lock: Lock,
  blocks: RegistryBlock[],
  planned: PlannedFile[],
): Promise<SchemaChange[]> {
  const changes: SchemaChange[] = [];
  for (const block of blocks) {
    const schema = schemaModule(block, lock);
    const file =
      schema && planned.find((candidate) => candidate.block === block.name && candidate.source === schema.module);
    if (!schema || !file) continue;
    const recorded = lock.blocks[block.name]?.files[file.target];
    const before = (recorded === undefined ? undefined : await readBase(root, recorded)) ?? file.current;
    if (before === undefined || before === file.content) continue;
    const table = blockTable(block, lock);
    const change = compare(
      await render(before, schema.statements, table),
      await render(file.content, schema.statements, table),
    );
    if (change.added.length + change.changed.length + change.removed.length > 0)
      changes.push({ block: block.name, table, ...change });
  }
  return changes;
}

/** The registry file and export the block's chosen store renders its DDL with (PostgreSQL's, or a dialect's). */
function schemaModule(block: RegistryBlock, lock: Lock): { module: string; statements: string } | undefined {
  const store = blockStore(block, lock.blocks[block.name]);
  if (store.kind === "sql")
    return block.migration?.schema === undefined
      ? undefined
      : { module: block.migration.schema, statements: "schemaStatements" };
  return store.kind === "dialect"
    ? { module: store.feature.sqlSchema.module, statements: store.feature.sqlSchema.statements }
    : undefined;
}

async function render(text: string, name: string, table: string): Promise<string[]> {
  const statements = (await importModuleText(text))[name];
  return typeof statements === "function" ? (statements as (table: string) => string[])(table) : [];
}

/**
 * Statements in both versions are left out; a new one that names the object an old one named redefines
 * it (a function's body, an index's columns), any other new one is added, and an old one whose object
 * no new statement names is removed.
 */
function compare(before: string[], after: string[]): Omit<SchemaChange, "block" | "table"> {
  const had = new Set(before.map(normalized));
  const has = new Set(after.map(normalized));
  const newOnes = after.filter((statement) => !had.has(normalized(statement)));
  const oldOnes = before.filter((statement) => !has.has(normalized(statement)));
  const oldHeads = new Set(oldOnes.map(firstLine));
  const newHeads = new Set(newOnes.map(firstLine));
  return {
    added: newOnes.filter((statement) => !oldHeads.has(firstLine(statement))).map(summary),
    changed: newOnes.filter((statement) => oldHeads.has(firstLine(statement))).map(summary),
    removed: oldOnes.filter((statement) => !newHeads.has(firstLine(statement))).map(summary),
  };
}

/** What a statement creates or alters: its first line up to the first parenthesis (`CREATE INDEX IF NOT EXISTS t_idx ON t`). */
function firstLine(statement: string): string {
  return normalized((statement.trim().split("\n")[0] ?? "").split("(")[0] ?? "");
}

function normalized(statement: string): string {
  return statement.replace(/\s+/g, " ").trim();
}

/** A statement on one line, cut where the object it creates has been named. */
function summary(statement: string): string {
  const text = normalized(statement);
  return text.length > SUMMARY_LENGTH ? `${text.slice(0, SUMMARY_LENGTH)}…` : text;
}

const SUMMARY_LENGTH = 120;
