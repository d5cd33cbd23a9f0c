// Live check: the tables (and functions) of every added block with a schema exist on DATABASE_URL.
import pg from "pg";
import type { Lock } from "../config/lock-file.js";
import { MISSING_OBJECTS_SQL, schemaObjects } from "../migrate/schemas.js";
import type { Registry } from "../registry/types.js";
import { finding, type Finding } from "./finding.js";

/**
 * One finding per table missing (or one when the database cannot be reached).
 *
 * @example
 * await checkMigration(process.env.DATABASE_URL, registry, lock); // [] when every table exists
 */
export async function checkMigration(url: string, registry: Registry, lock: Lock): Promise<Finding[]> {
  const withSchema = registry.blocks.filter((block) => block.migration?.schema && block.name in lock.blocks);
  // A lock written before blocks recorded their table lists tables only: with one such block every recorded table is its own.
  const wanted = withSchema.flatMap((block) => {
    const recorded = Object.keys(lock.migrations);
    const own = lock.blocks[block.name]?.table;
    const tables = own
      ? [own]
      : withSchema.length === 1 && recorded.length
        ? recorded
        : [block.migration?.table as string];
    return tables.map((table) => ({ block: block.name, table, file: lock.migrations[table] ?? "blocks.lock.json" }));
  });
  if (wanted.length === 0) return [];
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
  } catch (cause) {
    return [
      finding(
        "migration-applied",
        "blocks.lock.json",
        1,
        `cannot connect to DATABASE_URL to check the tables: ${(cause as Error).message}`,
      ),
    ];
  }
  try {
    const findings: Finding[] = [];
    for (const { block, table, file } of wanted) {
      const { rows } = await client.query<{ name: string }>(MISSING_OBJECTS_SQL, schemaObjects(block, table));
      const missing = rows.map((row) => row.name);
      if (missing.length)
        findings.push(finding("migration-applied", file, 1, `${missing.join(", ")} missing on DATABASE_URL`));
    }
    return findings;
  } finally {
    await client.end().catch(() => {});
  }
}
