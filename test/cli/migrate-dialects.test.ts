// `blocks migrate` for a project on MySqlStore or SqliteStore: a plain SQL file in the dialect, applied twice
// harmlessly by the database's own client (MariaDB on MYSQL_URL, a temp SQLite file), and a clear refusal
// where the layout or the option is PostgreSQL's.
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { execa } from "execa";
import { createPool } from "mysql2/promise";
import { afterAll, describe, expect, it, vi } from "vitest";
import { runAdd } from "../../cli/commands/add.js";
import { runMigrate } from "../../cli/commands/migrate.js";
import { mySqlDropStatements } from "../../registry/idempotency/stores/mysql-schema.js";
import { rejection } from "./helpers.js";
import { sampleProject } from "./wiring-projects.js";

const MYSQL_URL = process.env.MYSQL_URL;
const lockOf = (dir: string) => JSON.parse(readFileSync(path.join(dir, "blocks.lock.json"), "utf8")) as { migrations: Record<string, string> };

async function storeProject(store: "mysql" | "sqlite", table: string, fixture = "hono-bundler", packages: string[] = []): Promise<string> {
  const dir = await sampleProject(fixture, packages);
  await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false, store, table });
  return dir;
}

/** The mariadb client, as a user applies a plain SQL migration: the file on stdin. */
async function mariadb(url: string, sql: string) {
  const { hostname, port, username, password, pathname } = new URL(url);
  const args = ["-h", hostname, "-P", port || "3306", "-u", decodeURIComponent(username), ...(password ? [`-p${decodeURIComponent(password)}`] : []), pathname.slice(1)];
  return execa("mariadb", args, { input: sql, reject: false });
}

describe("blocks migrate on MySqlStore and SqliteStore", () => {
  const mysqlTables: string[] = [];
  afterAll(async () => {
    if (!MYSQL_URL || mysqlTables.length === 0) return;
    const pool = createPool(MYSQL_URL);
    for (const table of mysqlTables) for (const statement of mySqlDropStatements(table)) await pool.query(statement);
    await pool.end();
  });

  it("--store mysql: writes one .mysql.sql file with the procedure between DELIMITER lines, records it, and writes it once", async () => {
    const table = `mig_${randomUUID().slice(0, 8)}`;
    const dir = await storeProject("mysql", table);
    const first = await runMigrate({ cwd: dir });
    expect(first.written).toEqual([expect.stringMatching(new RegExp(`^migrations/\\d{14}_create_${table}\\.mysql\\.sql$`))]);
    const sql = readFileSync(path.join(dir, first.written[0] as string), "utf8");
    expect(sql).toContain(`CREATE TABLE IF NOT EXISTS ${table} (`);
    expect(sql).toContain(`CREATE TABLE IF NOT EXISTS ${table}_retries (`);
    expect(sql).toMatch(new RegExp(`DROP PROCEDURE IF EXISTS ${table}_create;\\n\\nDELIMITER //\\nCREATE PROCEDURE ${table}_create[^]*END //\\nDELIMITER ;\\n$`));
    expect(sql).not.toMatch(/to_regclass|plpgsql|UNLOGGED/i);
    expect(lockOf(dir).migrations[table]).toBe(first.written[0]);
    const second = await runMigrate({ cwd: dir });
    expect(second.written).toEqual([]);
    expect(second.existing).toEqual(first.written);
  }, 60_000);

  it.runIf(MYSQL_URL)("[MYSQL_URL] the written file applied twice by the mariadb client: both runs succeed, and the tables and procedure are there", async () => {
    const table = `mig_${randomUUID().slice(0, 8)}`;
    mysqlTables.push(table);
    const dir = await storeProject("mysql", table);
    const { written } = await runMigrate({ cwd: dir });
    const sql = readFileSync(path.join(dir, written[0] as string), "utf8");
    for (const run of [await mariadb(MYSQL_URL as string, sql), await mariadb(MYSQL_URL as string, sql)]) expect(run.exitCode, run.stderr).toBe(0);
    const pool = createPool(MYSQL_URL as string);
    try {
      const [tables] = await pool.query("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN (?, ?) ORDER BY 1", [table, `${table}_retries`]);
      expect((tables as Array<{ name: string }>).map((row) => row.name)).toEqual([table, `${table}_retries`]);
      const [procedures] = await pool.query("SELECT routine_name AS name FROM information_schema.routines WHERE routine_schema = DATABASE() AND routine_name = ?", [`${table}_create`]);
      expect(procedures).toHaveLength(1);
    } finally {
      await pool.end();
    }
  }, 60_000);

  it("--store sqlite: the .sqlite.sql file applied twice to one database file succeeds, with the tables and indexes there once", async () => {
    const table = `mig_${randomUUID().slice(0, 8)}`;
    const dir = await storeProject("sqlite", table);
    const { written } = await runMigrate({ cwd: dir });
    expect(written).toEqual([expect.stringMatching(new RegExp(`^migrations/\\d{14}_create_${table}\\.sqlite\\.sql$`))]);
    const sql = readFileSync(path.join(dir, written[0] as string), "utf8");
    const folder = mkdtempSync(path.join(tmpdir(), "blocks-sqlite-"));
    try {
      const file = path.join(folder, "app.db");
      // Twice, as a second deploy would: each run opens the file anew and executes the whole script.
      for (let run = 0; run < 2; run++) {
        const db = new Database(file);
        db.exec(sql);
        db.close();
      }
      const db = new Database(file, { readonly: true });
      const objects = db.prepare("SELECT type, name FROM sqlite_master WHERE name LIKE ? ORDER BY name").all(`${table}%`);
      db.close();
      expect(objects).toEqual([
        { type: "table", name: table },
        { type: "index", name: `${table}_expires_at_idx` },
        { type: "index", name: `${table}_processing_idx` },
        { type: "table", name: `${table}_retries` },
        { type: "index", name: `${table}_retries_expires_at_idx` },
      ]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 60_000);

  it.each([
    { layout: "prisma", packages: ["@prisma/client"], folder: "prisma/migrations" },
    { layout: "drizzle", packages: ["drizzle-orm"], folder: "drizzle" },
  ])("a $layout layout: writes nothing, says the SQL is plain only and how to take it; --print still prints it", async ({ layout, folder }) => {
    const dir = await storeProject("sqlite", "idempotency_records");
    const config = JSON.parse(readFileSync(path.join(dir, "blocks.json"), "utf8")) as { database: Record<string, string> };
    writeFileSync(path.join(dir, "blocks.json"), JSON.stringify({ ...config, database: { ...config.database, layout, migrations: folder } }));
    const error = await rejection(runMigrate({ cwd: dir }));
    expect(error.code).toBe("INVALID_OPTION");
    expect(error.message).toBe(`blocks migrate writes the SQLite tables as a plain SQL file only, not into a ${layout} layout (${folder}).`);
    expect(error.suggestion).toContain("blocks migrate --print > sqlite-idempotency.sql");
    expect(existsSync(path.join(dir, folder))).toBe(false);
    const out = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    try {
      await runMigrate({ cwd: dir, print: true });
      expect(out.mock.calls.map((call) => String(call[0])).join("")).toContain("CREATE TABLE IF NOT EXISTS idempotency_records (");
    } finally {
      out.mockRestore();
    }
  }, 60_000);

  it("--apply is refused before anything is written, naming the file and the client to apply it with", async () => {
    const dir = await storeProject("mysql", "idempotency_records");
    const error = await rejection(runMigrate({ cwd: dir, apply: true }));
    expect(error.code).toBe("INVALID_OPTION");
    expect(error.message).toBe("--apply runs PostgreSQL migrations and DynamoDB tables; idempotency's store is on mysql.");
    expect(error.suggestion).toContain("mariadb <db> < file");
    expect(existsSync(path.join(dir, "migrations"))).toBe(false);
  }, 60_000);

  it("a --table MySQL would refuse is a clear error, and nothing is written", async () => {
    const dir = await storeProject("mysql", "idempotency_records");
    const error = await rejection(runMigrate({ cwd: dir, table: "a_table_name_longer_than_forty_characters_x" }));
    expect(error.code).toBe("INVALID_TABLE_NAME");
    expect(error.message).toContain("at most 40");
    expect(existsSync(path.join(dir, "migrations"))).toBe(false);
  }, 60_000);
});
