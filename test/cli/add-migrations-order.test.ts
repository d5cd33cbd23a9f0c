// Several blocks in one `add`: their migrations, per layout, are what the project's own tool applies in order.
// Found in a Drizzle project: `add idempotency error-handler rate-limiter` wrote two files numbered 0001_,
// only one entered meta/_journal.json, and `drizzle-kit migrate` succeeded without creating idempotency_records.
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { execa } from "execa";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { runAdd } from "../../cli/commands/add.js";
import { runInit } from "../../cli/commands/init.js";
import { withFreshDatabase } from "./fresh-database.js";
import { tempProject } from "./helpers.js";

const url = process.env.DATABASE_URL;
const BLOCKS = ["idempotency", "error-handler", "rate-limiter"];
const bin = (name: string) => path.resolve(import.meta.dirname, "../../node_modules/.bin", name);

/** A project of the given layout with the three blocks added in one command. */
async function addedTogether(layout: (dir: string) => void): Promise<string> {
  const dir = tempProject("hono-bundler");
  layout(dir);
  await runInit({ cwd: dir, yes: true });
  await runAdd({ blocks: BLOCKS, cwd: dir, yes: true, install: false, tests: false });
  return dir;
}

function declare(dir: string, devDependencies: Record<string, string>, scripts: Record<string, string> = {}): void {
  const file = path.join(dir, "package.json");
  const pkg = JSON.parse(readFileSync(file, "utf8")) as Record<string, Record<string, string> | undefined>;
  writeFileSync(
    file,
    JSON.stringify(
      {
        ...pkg,
        scripts: { ...pkg.scripts, ...scripts },
        devDependencies: { ...pkg.devDependencies, ...devDependencies },
      },
      null,
      2,
    ),
  );
}

const TABLES = ["idempotency_records", "idempotency_records_retries", "rate_limits"];

describe("add of several blocks: migrations the project's tool applies in order", () => {
  it("drizzle-kit: one journal entry per file, numbered 0000, 0001, with increasing `when`", async () => {
    const dir = await addedTogether((root) => declare(root, { "drizzle-kit": "^0.31.11" }));
    const journal = JSON.parse(readFileSync(path.join(dir, "drizzle/meta/_journal.json"), "utf8")) as {
      entries: Array<{ idx: number; tag: string; when: number }>;
    };
    expect(journal.entries.map((entry) => entry.tag)).toEqual([
      "0000_create_idempotency_records",
      "0001_create_rate_limits",
    ]);
    expect(journal.entries[1]!.when).toBeGreaterThan(journal.entries[0]!.when);
    expect(
      readdirSync(path.join(dir, "drizzle"))
        .filter((name) => name.endsWith(".sql"))
        .sort(),
    ).toEqual(journal.entries.map((entry) => `${entry.tag}.sql`));
  });

  it.skipIf(!url)("[DATABASE_URL] drizzle-kit migrate creates every block's tables", async () => {
    const dir = await addedTogether((root) => declare(root, { "drizzle-kit": "^0.31.11" }));
    writeFileSync(
      path.join(dir, "drizzle.config.js"),
      'export default { dialect: "postgresql", out: "./drizzle", dbCredentials: { url: process.env.DATABASE_URL } };\n',
    );
    const tables = await withFreshDatabase(url as string, (databaseUrl) =>
      execa(bin("drizzle-kit"), ["migrate", "--config", "drizzle.config.js"], {
        cwd: dir,
        env: { DATABASE_URL: databaseUrl },
      }),
    );
    expect(tables).toEqual(expect.arrayContaining(TABLES));
  });

  it("node-pg-migrate: distinct millisecond prefixes, in the order the blocks were named", async () => {
    const dir = await addedTogether((root) => declare(root, { "node-pg-migrate": "^9.0.0" }));
    const files = readdirSync(path.join(dir, "migrations")).sort();
    expect(files).toHaveLength(2);
    expect(files[0]).toMatch(/^\d{13}_create-idempotency-records\.sql$/);
    expect(files[1]).toMatch(/^\d{13}_create-rate-limits\.sql$/);
    expect(new Set(files.map((file) => file.split("_")[0])).size).toBe(2);
  });

  it.skipIf(!url)("[DATABASE_URL] node-pg-migrate up creates every block's tables", async () => {
    const dir = await addedTogether((root) => declare(root, { "node-pg-migrate": "^9.0.0" }));
    const tables = await withFreshDatabase(url as string, (databaseUrl) =>
      execa(bin("node-pg-migrate"), ["up", "-m", "migrations"], { cwd: dir, env: { DATABASE_URL: databaseUrl } }),
    );
    expect(tables).toEqual(expect.arrayContaining(TABLES));
  });

  it("Prisma: one folder per migration, distinct timestamps, in the order the blocks were named (prisma migrate deploy needs the schema engine, not available here)", async () => {
    const dir = await addedTogether((root) => declare(root, { prisma: "7.10.0" }));
    const folders = readdirSync(path.join(dir, "prisma/migrations")).sort();
    expect(folders).toEqual([
      expect.stringMatching(/^\d{14}_create_idempotency_records$/),
      expect.stringMatching(/^\d{14}_create_rate_limits$/),
    ]);
    expect(folders[0]!.slice(0, 14)).not.toBe(folders[1]!.slice(0, 14));
    for (const folder of folders)
      expect(readFileSync(path.join(dir, "prisma/migrations", folder, "migration.sql"), "utf8")).toMatch(
        /CREATE (?:UNLOGGED )?TABLE IF NOT EXISTS/,
      );
  });

  it("plain SQL: distinct timestamps, so a runner sorting by name applies them in the order the blocks were named", async () => {
    const dir = await addedTogether(() => undefined);
    const files = readdirSync(path.join(dir, "migrations")).sort();
    expect(files).toEqual([
      expect.stringMatching(/^\d{14}_create_idempotency_records\.sql$/),
      expect.stringMatching(/^\d{14}_create_rate_limits\.sql$/),
    ]);
    expect(files[0]!.slice(0, 14)).not.toBe(files[1]!.slice(0, 14));
  });

  it.skipIf(!url)("[DATABASE_URL] plain SQL: the files run in name order create every block's tables", async () => {
    const dir = await addedTogether(() => undefined);
    const tables = await withFreshDatabase(url as string, async (databaseUrl) => {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      for (const file of readdirSync(path.join(dir, "migrations")).sort())
        await client.query(readFileSync(path.join(dir, "migrations", file), "utf8"));
      await client.end();
    });
    expect(tables).toEqual(expect.arrayContaining(TABLES));
  });
});
