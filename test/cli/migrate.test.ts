// Migrations rendered from the block's one DDL source, per layout; --apply on real PostgreSQL twice.
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { runAdd } from "../../cli/commands/add.js";
import { runInit } from "../../cli/commands/init.js";
import { runMigrate } from "../../cli/commands/migrate.js";
import { planMigration } from "../../cli/migrate/render-migration.js";
import { loadRegistry } from "../../cli/registry/manifest.js";
import { postgresSchemaStatements } from "../../registry/idempotency/stores/postgres-schema.js";
import { PostgresStore } from "../../registry/idempotency/stores/postgres-store.js";
import { rejection, tempProject } from "./helpers.js";

const emptyLock = { version: 1 as const, blocks: {}, migrations: {} };
const now = new Date("2026-01-02T03:04:05Z");

// Planning a migration is synchronous: the registry loads each block's schema module first.
beforeAll(async () => {
  await loadRegistry();
});

describe("migration rendering", () => {
  it("plain SQL: a timestamped file holding exactly the block's statements", () => {
    const plan = planMigration({
      root: tempProject("hono-bundler"),
      block: "idempotency",
      table: "idempotency_records",
      target: { layout: "sql", migrations: "migrations" },
      lock: emptyLock,
      now,
    });
    expect(plan.files.map((file) => file.path)).toEqual(["migrations/20260102030405_create_idempotency_records.sql"]);
    for (const statement of postgresSchemaStatements("idempotency_records"))
      expect(plan.files[0]?.content).toContain(`${statement};`);
  });

  it("node-pg-migrate: Up and Down sections in an ms-prefixed SQL file", () => {
    const plan = planMigration({
      root: tempProject("hono-bundler"),
      block: "idempotency",
      table: "idempotency_records",
      target: { layout: "node-pg-migrate", migrations: "migrations" },
      lock: emptyLock,
      now,
    });
    expect(plan.files[0]?.path).toBe(`migrations/${now.getTime()}_create-idempotency-records.sql`);
    expect(plan.files[0]?.content).toMatch(
      /-- Up Migration\n[\s\S]*CREATE TABLE IF NOT EXISTS[\s\S]*-- Down Migration\nDROP TABLE IF EXISTS idempotency_records_retries;/,
    );
  });

  it("Prisma: a migration folder, with a note that schema.prisma must learn the tables", () => {
    const plan = planMigration({
      root: tempProject("hono-bundler"),
      block: "idempotency",
      table: "idempotency_records",
      target: { layout: "prisma", migrations: "prisma/migrations" },
      lock: emptyLock,
      now,
    });
    expect(plan.files[0]?.path).toBe("prisma/migrations/20260102030405_create_idempotency_records/migration.sql");
    expect(plan.notes.join(" ")).toContain("schema.prisma");
  });

  it("drizzle-kit: statement breakpoints and a journal entry", () => {
    const dir = tempProject("hono-bundler");
    mkdirSync(path.join(dir, "drizzle/meta"), { recursive: true });
    writeFileSync(
      path.join(dir, "drizzle/meta/_journal.json"),
      JSON.stringify({ version: "7", dialect: "postgresql", entries: [{ idx: 0, tag: "0000_init" }] }),
    );
    const plan = planMigration({
      root: dir,
      block: "idempotency",
      table: "idempotency_records",
      target: { layout: "drizzle", migrations: "drizzle" },
      lock: emptyLock,
      now,
    });
    expect(plan.files.map((file) => file.path)).toEqual([
      "drizzle/0001_create_idempotency_records.sql",
      "drizzle/meta/_journal.json",
    ]);
    expect(plan.files[0]?.content).toContain("--> statement-breakpoint");
    expect(JSON.parse(plan.files[1]?.content ?? "").entries[1]).toMatchObject({
      idx: 1,
      tag: "0001_create_idempotency_records",
    });
  });
});

describe("blocks migrate", () => {
  it("writes one migration per block with a table, and finds them again instead of writing a second", async () => {
    const dir = tempProject("hono-bundler");
    const withTables = (await loadRegistry()).blocks.filter((block) => block.migration).length;
    expect(withTables).toBeGreaterThanOrEqual(2); // idempotency and rate-limiter: no block is named in the CLI's code
    const first = await runMigrate({ cwd: dir });
    expect(first.written).toHaveLength(withTables);
    const second = await runMigrate({ cwd: dir });
    expect(second.written).toEqual([]);
    expect(second.existing).toEqual(first.written);
    expect(readdirSync(path.join(dir, "migrations"))).toHaveLength(withTables);
  });

  it("after `add --table`, a bare migrate (what add's Next: line and the README say) finds that table's migration; --table still overrides", async () => {
    const dir = tempProject("hono-bundler");
    await runInit({ cwd: dir, yes: true });
    await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false, table: "nu7_idempotency" });
    const lockOf = () =>
      JSON.parse(readFileSync(path.join(dir, "blocks.lock.json"), "utf8")) as {
        blocks: Record<string, { table?: string }>;
        migrations: Record<string, string>;
      };
    const added = lockOf().migrations.nu7_idempotency;
    expect(added).toMatch(/_create_nu7_idempotency\.sql$/);
    expect(lockOf().blocks.idempotency?.table).toBe("nu7_idempotency");

    const bare = await runMigrate({ cwd: dir });
    expect(bare).toMatchObject({ written: [], existing: [added] });
    expect(readdirSync(path.join(dir, "migrations"))).toHaveLength(1);
    expect(Object.keys(lockOf().migrations)).toEqual(["nu7_idempotency"]);
    // A later `add` (another framework, say) keeps the table: the wiring and the migration agree.
    await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false });
    expect(lockOf().blocks.idempotency?.table).toBe("nu7_idempotency");

    const other = await runMigrate({ cwd: dir, block: "idempotency", table: "other_idempotency" });
    expect(other.written).toEqual([expect.stringMatching(/_create_other_idempotency\.sql$/)]);
  });

  it("--table is validated by the block's own rule", async () => {
    const error = await rejection(runMigrate({ cwd: tempProject("hono-bundler"), table: "records; DROP TABLE users" }));
    expect(error.code).toBe("INVALID_TABLE_NAME");
  });

  it("--apply without DATABASE_URL says what to set", async () => {
    const error = await rejection(runMigrate({ cwd: tempProject("hono-bundler"), apply: true, databaseUrl: "" }));
    expect(error.code).toBe("MISSING_DATABASE_URL");
  });

  const url = process.env.DATABASE_URL;
  it.skipIf(!url)("[DATABASE_URL] --apply creates the tables in one transaction; a second run is a no-op", async () => {
    const table = `blocks_migrate_${process.pid}`;
    const dir = tempProject("hono-bundler");
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const first = await runMigrate({ block: "idempotency", cwd: dir, table, apply: true });
      expect(first.applied).toEqual([{ table, alreadyApplied: false }]);
      const second = await runMigrate({ block: "idempotency", cwd: dir, table, apply: true });
      expect(second.applied).toEqual([{ table, alreadyApplied: true }]);
      const { rows } = await client.query(
        "SELECT conname FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'p'",
        [table],
      );
      expect(rows).toEqual([{ conname: `${table}_scope_key` }]);
      expect(readFileSync(path.join(dir, second.existing[0] ?? ""), "utf8")).toContain(
        `CREATE TABLE IF NOT EXISTS ${table}`,
      );
    } finally {
      await client.query(`DROP TABLE IF EXISTS ${table}, ${table}_retries`);
      await client.query(`DROP FUNCTION IF EXISTS ${table}_claim, ${table}_complete`);
      await client.end();
    }
  });

  /** A project migrated before the store called its function: the create migration has the tables only. */
  function migratedBefore(table: string) {
    const dir = tempProject("hono-bundler");
    const tablesOnly = postgresSchemaStatements(table).filter(
      (statement) => !statement.startsWith("CREATE OR REPLACE FUNCTION"),
    );
    mkdirSync(path.join(dir, "migrations"), { recursive: true });
    const old = `migrations/20250101000000_create_${table}.sql`;
    writeFileSync(path.join(dir, old), tablesOnly.map((statement) => `${statement};\n`).join("\n"));
    return { dir, old, tablesOnly };
  }

  it("a migration written before the store's function: writes an update migration with the function only, once", async () => {
    const { dir } = migratedBefore("idempotency_records");
    const first = await runMigrate({ block: "idempotency", cwd: dir });
    expect(first.written).toHaveLength(1);
    expect(first.written[0]).toMatch(/^migrations\/\d{14}_update_idempotency_records\.sql$/);
    const content = readFileSync(path.join(dir, first.written[0] ?? ""), "utf8");
    expect(content).toContain("CREATE OR REPLACE FUNCTION idempotency_records_claim(");
    expect(content).not.toContain("CREATE TABLE");
    const second = await runMigrate({ block: "idempotency", cwd: dir });
    expect(second).toMatchObject({
      written: [],
      existing: ["migrations/20250101000000_create_idempotency_records.sql"],
    });
  });

  it("a function whose body changed since its migration: an update migration redefines it (and only it), once", async () => {
    const dir = tempProject("hono-bundler");
    const current = postgresSchemaStatements("idempotency_records");
    const older = current.map((statement) =>
      /^CREATE OR REPLACE FUNCTION \S+_claim\(/.test(statement)
        ? statement.replace(/\n\$\$;?$|\$\$/, (end) => `-- an older body\n${end}`)
        : statement,
    );
    expect(older).not.toEqual(current);
    mkdirSync(path.join(dir, "migrations"), { recursive: true });
    writeFileSync(
      path.join(dir, "migrations/20250101000000_create_idempotency_records.sql"),
      older.map((statement) => `${statement};\n`).join("\n"),
    );
    const first = await runMigrate({ block: "idempotency", cwd: dir });
    expect(first.written).toEqual([expect.stringMatching(/^migrations\/\d{14}_update_idempotency_records\.sql$/)]);
    const content = readFileSync(path.join(dir, first.written[0] ?? ""), "utf8");
    const claim = current.find((statement) => statement.includes("_claim(")) ?? "";
    expect(content).toContain(claim);
    expect(content).not.toContain("CREATE TABLE");
    expect((content.match(/CREATE OR REPLACE FUNCTION/g) ?? []).length).toBe(1);
    expect(await runMigrate({ block: "idempotency", cwd: dir })).toMatchObject({ written: [] });
  });

  it.skipIf(!url)(
    "[DATABASE_URL] migrated before the function: the store names it and the command; --apply adds it",
    async () => {
      const table = `blocks_upgrade_${process.pid}`;
      const { dir, tablesOnly } = migratedBefore(table);
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      try {
        for (const statement of tablesOnly) await pool.query(statement);
        const store = new PostgresStore(pool, { table });
        const create = () =>
          store.create({
            scope: { operation: "op", userId: "u", key: "k" },
            requestHash: "h",
            ttlMs: 60_000,
            token: randomUUID(),
          });
        await expect(create()).rejects.toThrow(
          new RegExp(`function ${table}_claim\\(\\) is missing .*npx blocks migrate --apply`),
        );
        const applied = await runMigrate({ block: "idempotency", cwd: dir, table, apply: true });
        expect(applied.applied).toEqual([{ table, alreadyApplied: false }]);
        await expect(create()).resolves.toMatchObject({ status: "CREATED" });
        const again = await runMigrate({ block: "idempotency", cwd: dir, table, apply: true });
        expect(again).toMatchObject({ written: [], applied: [{ table, alreadyApplied: true }] });
      } finally {
        await pool.query(`DROP TABLE IF EXISTS ${table}, ${table}_retries`);
        await pool.query(`DROP FUNCTION IF EXISTS ${table}_claim, ${table}_complete`);
        await pool.end();
      }
    },
  );

  it.skipIf(!url)(
    "[DATABASE_URL] a new database (another environment) gets the create migration and every update after it from one --apply",
    async () => {
      const table = `blocks_fresh_${process.pid}`;
      const { dir } = migratedBefore(table);
      const written = await runMigrate({ block: "idempotency", cwd: dir, table });
      expect(written.written).toEqual([expect.stringMatching(/_update_/)]);
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      try {
        // Nothing of the table exists yet: only running both files makes a working store.
        const applied = await runMigrate({ block: "idempotency", cwd: dir, table, apply: true });
        expect(applied).toMatchObject({ written: [], applied: [{ table, alreadyApplied: false }] });
        const store = new PostgresStore(pool, { table });
        await expect(
          store.create({
            scope: { operation: "op", userId: "u", key: "k" },
            requestHash: "h",
            ttlMs: 60_000,
            token: randomUUID(),
          }),
        ).resolves.toMatchObject({ status: "CREATED" });
      } finally {
        await pool.query(`DROP TABLE IF EXISTS ${table}, ${table}_retries`);
        await pool.query(`DROP FUNCTION IF EXISTS ${table}_claim, ${table}_complete`);
        await pool.end();
      }
    },
  );

  /** A project migrated before recovery points: the retries table has no steps, the store called `<table>_create`. */
  function migratedBeforeSteps(table: string) {
    const dir = tempProject("hono-bundler");
    const before = postgresSchemaStatements(table).filter(
      (statement) => !/^ALTER TABLE|^CREATE OR REPLACE FUNCTION \S+_claim\(/.test(statement),
    );
    mkdirSync(path.join(dir, "migrations"), { recursive: true });
    writeFileSync(
      path.join(dir, `migrations/20250601000000_create_${table}.sql`),
      before.map((statement) => `${statement};\n`).join("\n"),
    );
    return { dir, before };
  }

  it("a migration written before steps: a new update migration adds the steps columns and the function that reads them", async () => {
    const { dir } = migratedBeforeSteps("idempotency_records");
    const first = await runMigrate({ block: "idempotency", cwd: dir });
    expect(first.written).toEqual([expect.stringMatching(/^migrations\/\d{14}_update_idempotency_records\.sql$/)]);
    const content = readFileSync(path.join(dir, first.written[0] ?? ""), "utf8");
    expect(content).toContain("ALTER TABLE idempotency_records_retries ADD COLUMN IF NOT EXISTS request_hash TEXT");
    expect(content).toContain("ALTER TABLE idempotency_records_retries ADD COLUMN IF NOT EXISTS steps JSONB");
    expect(content).toContain("CREATE OR REPLACE FUNCTION idempotency_records_claim(");
    expect(content).not.toContain("CREATE TABLE");
    expect(
      readFileSync(path.join(dir, "migrations/20250601000000_create_idempotency_records.sql"), "utf8"),
    ).not.toContain("steps");
    expect(await runMigrate({ block: "idempotency", cwd: dir })).toMatchObject({ written: [] });
  });

  it.skipIf(!url)(
    "[DATABASE_URL] migrated before steps: --apply upgrades a table in use, whose retry counters keep counting",
    async () => {
      const table = `blocks_steps_${process.pid}`;
      const { dir, before } = migratedBeforeSteps(table);
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      try {
        for (const statement of before) await pool.query(statement);
        const scope = { operation: "op", userId: "u", key: "k" };
        await pool.query(
          `INSERT INTO ${table}_retries (operation, user_id, key, retry_count, expires_at) VALUES ('op', 'u', 'k', 1, now() + interval '1 hour')`,
        );
        await runMigrate({ block: "idempotency", cwd: dir, table, apply: true });
        const store = new PostgresStore(pool, { table });
        const token = randomUUID();
        await expect(store.create({ scope, requestHash: "h", ttlMs: 60_000, token })).resolves.toEqual({
          status: "CREATED",
          steps: {},
        });
        expect(await store.markStep(scope, token, "charge", '"ch_1"', 60_000)).toBe(true);
        expect(await store.incrementRetryCount(scope, 60_000)).toBe(2);
        expect((await store.get(scope))?.steps).toEqual({ charge: '"ch_1"' });
      } finally {
        await pool.query(`DROP TABLE IF EXISTS ${table}, ${table}_retries`);
        await pool.query(`DROP FUNCTION IF EXISTS ${table}_claim, ${table}_create, ${table}_complete`);
        await pool.end();
      }
    },
  );
});
