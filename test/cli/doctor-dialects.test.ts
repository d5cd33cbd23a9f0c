// `blocks doctor` on MySqlStore and SqliteStore: the store's tables (and MySQL's procedure) are looked for where
// the wiring connects (MYSQL_URL, SQLITE_PATH, LIBSQL_URL), read-only through the project's own driver; unset, nothing is claimed.
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { execa } from "execa";
import { createPool } from "mysql2/promise";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { runAdd } from "../../cli/commands/add.js";
import { runDoctor } from "../../cli/commands/doctor.js";
import { runMigrate } from "../../cli/commands/migrate.js";
import { configureOutput } from "../../cli/utils/logger.js";
import { mySqlDropStatements } from "../../registry/idempotency/stores/mysql-schema.js";
import { sqliteSchemaStatements } from "../../registry/idempotency/stores/sqlite-schema.js";
import { sampleProject } from "./wiring-projects.js";

const MYSQL_URL = process.env.MYSQL_URL;

async function storeProject(store: "mysql" | "sqlite", table: string, client?: string) {
  const dir = await sampleProject("hono-bundler", []);
  await runAdd({
    blocks: ["idempotency"],
    cwd: dir,
    yes: true,
    install: false,
    store,
    table,
    ...(client ? { client } : {}),
  });
  const { written } = await runMigrate({ cwd: dir });
  return { dir, sql: readFileSync(path.join(dir, written[0] as string), "utf8"), file: written[0] as string };
}

const migrationFindings = async (dir: string) => {
  const result = await runDoctor({ cwd: dir });
  return {
    checkedDatabase: result.checkedDatabase,
    findings: result.findings.filter((item) => item.rule === "migration-applied"),
  };
};

describe("blocks doctor on a MySQL or SQLite store", () => {
  const folders: string[] = [];
  const mysqlTables: string[] = [];
  afterEach(() => vi.unstubAllEnvs());
  afterAll(async () => {
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
    if (!MYSQL_URL || mysqlTables.length === 0) return;
    const pool = createPool(MYSQL_URL);
    for (const table of mysqlTables) for (const statement of mySqlDropStatements(table)) await pool.query(statement);
    await pool.end();
  });

  it("SQLite: no file is a finding (never an empty database made); a missing table is named; once migrated, none", async () => {
    const table = `doc_${randomUUID().slice(0, 8)}`;
    const { dir, sql, file } = await storeProject("sqlite", table);
    const folder = mkdtempSync(path.join(tmpdir(), "blocks-doctor-"));
    folders.push(folder);
    const db = path.join(folder, "app.db");
    vi.stubEnv("SQLITE_PATH", db);

    const absent = await migrationFindings(dir);
    expect(absent.findings).toEqual([
      expect.objectContaining({ file, message: expect.stringMatching(/^cannot open .*app\.db to check the tables: /) }),
    ]);
    expect(() => new Database(db, { fileMustExist: true })).toThrow();

    const partial = new Database(db);
    partial.exec(sqliteSchemaStatements(table)[0] as string); // the records table only
    partial.close();
    const missing = await migrationFindings(dir);
    expect(missing.checkedDatabase).toBe(true);
    expect(missing.findings.map((item) => item.message)).toEqual([
      expect.stringMatching(new RegExp(`^${table}_retries missing on `)),
    ]);
    expect(missing.findings[0]?.fix).toContain(".sqlite.sql");

    const full = new Database(db);
    full.exec(sql);
    full.close();
    expect((await migrationFindings(dir)).findings).toEqual([]);
  }, 60_000);

  it("libSQL (a file: LIBSQL_URL): no file is a finding and none is made; a missing table is named; once migrated, none; the file is only read", async () => {
    const table = `doc_${randomUUID().slice(0, 8)}`;
    const { dir, sql, file } = await storeProject("sqlite", table, "libsql");
    const folder = mkdtempSync(path.join(tmpdir(), "blocks-doctor-"));
    folders.push(folder);
    const db = path.join(folder, "app.db");
    vi.stubEnv("LIBSQL_URL", pathToFileURL(db).href);

    const absent = await migrationFindings(dir);
    expect(absent.findings).toEqual([
      expect.objectContaining({ file, message: `cannot open LIBSQL_URL to check the tables: ${db} does not exist` }),
    ]);
    expect(existsSync(db)).toBe(false);

    const partial = new Database(db);
    partial.exec(sqliteSchemaStatements(table)[0] as string);
    partial.close();
    const before = readFileSync(db);
    const missing = await migrationFindings(dir);
    expect(missing).toEqual({
      checkedDatabase: true,
      findings: [expect.objectContaining({ message: `${table}_retries missing on LIBSQL_URL` })],
    });
    expect(readFileSync(db).equals(before)).toBe(true);

    const full = new Database(db);
    full.exec(sql);
    full.close();
    expect((await migrationFindings(dir)).findings).toEqual([]);
  }, 60_000);

  it("libSQL without LIBSQL_URL: unchecked until the wiring's default file exists; after migrate --apply made it, checked there and passing", async () => {
    vi.stubEnv("LIBSQL_URL", "");
    const table = `doc_${randomUUID().slice(0, 8)}`;
    const { dir } = await storeProject("sqlite", table, "libsql");
    expect(await migrationFindings(dir)).toEqual({ checkedDatabase: false, findings: [] });
    expect((await runMigrate({ cwd: dir, apply: true })).applied).toEqual([{ table, alreadyApplied: false }]);
    expect(existsSync(path.join(dir, "data/idempotency.db"))).toBe(true);
    expect(await migrationFindings(dir)).toEqual({ checkedDatabase: true, findings: [] });
  }, 60_000);

  it("SQLite without SQLITE_PATH: migrate --apply and doctor both name the default file they used and the variable to set (an app passing its own database uses another file)", async () => {
    vi.stubEnv("SQLITE_PATH", "");
    const table = `doc_${randomUUID().slice(0, 8)}`;
    const { dir } = await storeProject("sqlite", table);
    configureOutput({ silent: false });
    const output: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => output.push(String(chunk)) > 0);
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => output.push(String(chunk)) > 0);
    try {
      await runMigrate({ cwd: dir, apply: true });
      const applied = output.splice(0).join("");
      expect(applied).toMatch(
        new RegExp(
          `${table}: applied on data/idempotency\\.db, from migrations/\\d{14}_create_${table}\\.sqlite\\.sql`,
        ),
      );
      expect(applied).toContain(
        "SQLITE_PATH is not set: the tables went into data/idempotency.db, the wiring's default file. If the app passes its own database to createIdempotency, set the variable",
      );
      const doctor = await runDoctor({ cwd: dir });
      expect(doctor.notes).toEqual([
        expect.stringMatching(
          /^SQLITE_PATH is not set: checked data\/idempotency\.db, the wiring's default file\. If the app passes its own database to createIdempotency, set SQLITE_PATH/,
        ),
      ]);
      expect(output.join("")).toContain("SQLITE_PATH is not set: checked data/idempotency.db");
    } finally {
      vi.restoreAllMocks();
      configureOutput({ silent: true });
    }
  }, 60_000);

  it("without MYSQL_URL (or SQLITE_PATH and the default file) doctor checks no table and claims no check", async () => {
    vi.stubEnv("MYSQL_URL", "");
    const { dir } = await storeProject("mysql", "idempotency_records");
    expect(await migrationFindings(dir)).toEqual({ checkedDatabase: false, findings: [] });
  }, 60_000);

  it("MySQL: an unreachable MYSQL_URL is a finding, not a pass", async () => {
    vi.stubEnv("MYSQL_URL", "mysql://root@127.0.0.1:1/none");
    const { dir } = await storeProject("mysql", "idempotency_records");
    const { findings } = await migrationFindings(dir);
    expect(findings).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/^cannot open MYSQL_URL to check the tables: /) }),
    ]);
  }, 60_000);

  it.runIf(MYSQL_URL)(
    "[MYSQL_URL] MySQL: the tables and the procedure missing are named; after the file is applied, none",
    async () => {
      const table = `doc_${randomUUID().slice(0, 8)}`;
      mysqlTables.push(table);
      const { dir, sql } = await storeProject("mysql", table);
      const before = await migrationFindings(dir);
      expect(before.findings.map((item) => item.message)).toEqual([
        `${table}, ${table}_retries, ${table}_create_v2() missing on MYSQL_URL`,
      ]);
      const { hostname, port, username, pathname } = new URL(MYSQL_URL as string);
      const applied = await execa(
        "mariadb",
        ["-h", hostname, "-P", port || "3306", "-u", username, pathname.slice(1)],
        { input: sql, reject: false },
      );
      expect(applied.exitCode, applied.stderr).toBe(0);
      expect(await migrationFindings(dir)).toEqual({ checkedDatabase: true, findings: [] });
    },
    60_000,
  );
});
