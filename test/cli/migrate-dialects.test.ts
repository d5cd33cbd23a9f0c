// `blocks migrate` for a project on MySqlStore or SqliteStore: the DDL in a plain SQL file, a Drizzle or a Prisma
// migration, each applied twice harmlessly by the tool that runs it (the mariadb client, drizzle-kit, the way
// Prisma sends a file) and by `--apply` (MariaDB on MYSQL_URL, temp SQLite files); a clear refusal where the
// project's migrations run on another database.
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { execa } from "execa";
import { createConnection, createPool } from "mysql2/promise";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { runAdd } from "../../cli/commands/add.js";
import { runMigrate } from "../../cli/commands/migrate.js";
import { checkConfig } from "../../cli/config/blocks-config.js";
import { dialectSql } from "../../cli/migrate/dialect-migration.js";
import { mySqlDropStatements, mySqlSchemaStatements } from "../../registry/idempotency/stores/mysql-schema.js";
import { rejection } from "./helpers.js";
import { sampleProject } from "./wiring-projects.js";

const MYSQL_URL = process.env.MYSQL_URL;
const lockOf = (dir: string) =>
  JSON.parse(readFileSync(path.join(dir, "blocks.lock.json"), "utf8")) as { migrations: Record<string, string> };
/** The version of setup/database.ts the lock records for idempotency. */
const lockVariant = (dir: string) =>
  (
    JSON.parse(readFileSync(path.join(dir, "blocks.lock.json"), "utf8")) as {
      blocks: Record<string, { variants?: Record<string, string> }>;
    }
  ).blocks.idempotency?.variants?.["idempotency/setup/database.ts"];

type DatabaseConfig = { dialect: string; layout: string; migrations: string };

async function storeProject(
  store: "mysql" | "sqlite",
  table: string,
  database?: DatabaseConfig,
  client?: string,
): Promise<string> {
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
  if (database) setDatabase(dir, database);
  return dir;
}

function setDatabase(dir: string, database: DatabaseConfig) {
  const config = JSON.parse(readFileSync(path.join(dir, "blocks.json"), "utf8")) as Record<string, unknown>;
  writeFileSync(path.join(dir, "blocks.json"), JSON.stringify({ ...config, database }));
}

/** drizzle-kit itself, from the project (whose node_modules is the repo's). */
function drizzleKitMigrate(dir: string) {
  return execa("npx", ["drizzle-kit", "migrate", "--config", "drizzle.config.mjs"], {
    cwd: dir,
    reject: false,
    all: true,
    env: { MYSQL_URL },
  });
}

/** The store's tables and procedure on MYSQL_URL, sorted. */
async function mySqlObjects(
  db: { query(sql: string, params: string[]): Promise<[unknown, unknown]> },
  table: string,
): Promise<string[]> {
  const [rows] = await db.query(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN (?, ?)
     UNION ALL SELECT routine_name FROM information_schema.routines WHERE routine_schema = DATABASE() AND routine_name = ? ORDER BY 1`,
    [table, `${table}_retries`, `${table}_create_v2`],
  );
  return (rows as Array<{ name: string }>).map((row) => row.name);
}

function sqliteTables(file: string, table: string): string[] {
  const db = new Database(file);
  try {
    return (
      db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ? ORDER BY name")
        .all(`${table}%`) as Array<{ name: string }>
    ).map((row) => row.name);
  } finally {
    db.close();
  }
}

/** The mariadb client, as a user applies a plain SQL migration: the file on stdin. */
async function mariadb(url: string, sql: string) {
  const { hostname, port, username, password, pathname } = new URL(url);
  const args = [
    "-h",
    hostname,
    "-P",
    port || "3306",
    "-u",
    decodeURIComponent(username),
    ...(password ? [`-p${decodeURIComponent(password)}`] : []),
    pathname.slice(1),
  ];
  return execa("mariadb", args, { input: sql, reject: false });
}

describe("blocks migrate on MySqlStore and SqliteStore", () => {
  const mysqlTables: string[] = [];
  afterEach(() => vi.unstubAllEnvs());
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
    expect(first.written).toEqual([
      expect.stringMatching(new RegExp(`^migrations/\\d{14}_create_${table}\\.mysql\\.sql$`)),
    ]);
    const sql = readFileSync(path.join(dir, first.written[0] as string), "utf8");
    expect(sql).toContain(`CREATE TABLE IF NOT EXISTS ${table} (`);
    expect(sql).toContain(`CREATE TABLE IF NOT EXISTS ${table}_retries (`);
    expect(sql).toMatch(
      new RegExp(
        `DROP PROCEDURE IF EXISTS ${table}_create_v2;\\n\\nDELIMITER //\\nCREATE PROCEDURE ${table}_create_v2[^]*END //\\nDELIMITER ;\\n$`,
      ),
    );
    expect(sql).not.toMatch(/to_regclass|plpgsql|UNLOGGED/i);
    expect(lockOf(dir).migrations[table]).toBe(first.written[0]);
    const second = await runMigrate({ cwd: dir });
    expect(second.written).toEqual([]);
    expect(second.existing).toEqual(first.written);
  }, 60_000);

  it("a project migrated when the procedure was <table>_create: the update adds <table>_create_v2 beside it and leaves the old one to the instances still calling it", async () => {
    const table = `mig_${randomUUID().slice(0, 8)}`;
    const dir = await storeProject("mysql", table);
    const { written } = await runMigrate({ cwd: dir });
    const file = path.join(dir, written[0] as string);
    writeFileSync(file, readFileSync(file, "utf8").replaceAll(`${table}_create_v2`, `${table}_create`));
    const update = await runMigrate({ cwd: dir });
    expect(update.written).toHaveLength(1);
    const sql = readFileSync(path.join(dir, update.written[0] as string), "utf8");
    expect(sql).toContain(`CREATE PROCEDURE ${table}_create_v2(`);
    expect(sql).not.toMatch(new RegExp(`DROP PROCEDURE IF EXISTS ${table}_create;`));
    expect(sql).not.toContain("CREATE TABLE");
    expect(await runMigrate({ cwd: dir })).toMatchObject({ written: [] });
  }, 60_000);

  it("a procedure whose body changed since its migration: an update migration drops and creates it again (and nothing else), once", async () => {
    const table = `mig_${randomUUID().slice(0, 8)}`;
    const dir = await storeProject("mysql", table);
    const { written } = await runMigrate({ cwd: dir });
    const file = path.join(dir, written[0] as string);
    writeFileSync(file, readFileSync(file, "utf8").replace(/\nEND \/\//, "\n  -- an older body\nEND //"));
    const update = await runMigrate({ cwd: dir });
    expect(update.written).toEqual([
      expect.stringMatching(new RegExp(`^migrations/\\d{14}_update_${table}\\.mysql\\.sql$`)),
    ]);
    const sql = readFileSync(path.join(dir, update.written[0] as string), "utf8");
    expect(sql).toMatch(
      new RegExp(
        `^-- Update ${table}[^]*DROP PROCEDURE IF EXISTS ${table}_create_v2;\\n\\nDELIMITER //\\nCREATE PROCEDURE ${table}_create_v2[^]*END //\\nDELIMITER ;\\n$`,
      ),
    );
    expect(sql).not.toContain("CREATE TABLE");
    expect(sql).not.toContain("an older body");
    expect(await runMigrate({ cwd: dir })).toMatchObject({ written: [] });
  }, 60_000);

  it("SQLite: a statement the block added since the migration (here an index) gets an update migration with it alone", async () => {
    const table = `mig_${randomUUID().slice(0, 8)}`;
    const dir = await storeProject("sqlite", table);
    const { written } = await runMigrate({ cwd: dir });
    const file = path.join(dir, written[0] as string);
    const index = `CREATE INDEX IF NOT EXISTS ${table}_processing_idx`;
    const text = readFileSync(file, "utf8");
    expect(text).toContain(index);
    writeFileSync(file, text.replace(new RegExp(`${index}[^;]*;`), ""));
    const update = await runMigrate({ cwd: dir });
    expect(update.written).toEqual([
      expect.stringMatching(new RegExp(`^migrations/\\d{14}_update_${table}\\.sqlite\\.sql$`)),
    ]);
    const sql = readFileSync(path.join(dir, update.written[0] as string), "utf8");
    expect(sql).toContain(index);
    expect(sql).not.toContain("CREATE TABLE");
    expect(await runMigrate({ cwd: dir })).toMatchObject({ written: [] });
  }, 60_000);

  it.runIf(MYSQL_URL)(
    "[MYSQL_URL] the written file applied twice by the mariadb client: both runs succeed, and the tables and procedure are there",
    async () => {
      const table = `mig_${randomUUID().slice(0, 8)}`;
      mysqlTables.push(table);
      const dir = await storeProject("mysql", table);
      const { written } = await runMigrate({ cwd: dir });
      const sql = readFileSync(path.join(dir, written[0] as string), "utf8");
      for (const run of [await mariadb(MYSQL_URL as string, sql), await mariadb(MYSQL_URL as string, sql)])
        expect(run.exitCode, run.stderr).toBe(0);
      const pool = createPool(MYSQL_URL as string);
      try {
        const [tables] = await pool.query(
          "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN (?, ?) ORDER BY 1",
          [table, `${table}_retries`],
        );
        expect((tables as Array<{ name: string }>).map((row) => row.name)).toEqual([table, `${table}_retries`]);
        const [procedures] = await pool.query(
          "SELECT routine_name AS name FROM information_schema.routines WHERE routine_schema = DATABASE() AND routine_name = ?",
          [`${table}_create_v2`],
        );
        expect(procedures).toHaveLength(1);
      } finally {
        await pool.end();
      }
    },
    60_000,
  );

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
      const objects = db
        .prepare("SELECT type, name FROM sqlite_master WHERE name LIKE ? ORDER BY name")
        .all(`${table}%`);
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
    {
      layout: "prisma",
      folder: "prisma/migrations",
      why: 'its prisma migrations (prisma/migrations) run on PostgreSQL ("database.dialect" in blocks.json)',
    },
    {
      layout: "drizzle",
      folder: "drizzle",
      why: 'its drizzle migrations (drizzle) run on PostgreSQL ("database.dialect" in blocks.json)',
    },
    { layout: "node-pg-migrate", folder: "migrations", why: "node-pg-migrate runs on PostgreSQL only" },
  ])(
    "a $layout folder of a PostgreSQL project: writes nothing, says whose folder it is and how to take the SQL; --print still prints it",
    async ({ layout, folder, why }) => {
      const dir = await storeProject("sqlite", "idempotency_records");
      setDatabase(dir, { dialect: "postgresql", layout, migrations: folder });
      const error = await rejection(runMigrate({ cwd: dir }));
      expect(error.code).toBe("INVALID_OPTION");
      expect(error.message).toBe(
        `blocks migrate cannot write idempotency's SQLite tables into this project's migrations: ${why}.`,
      );
      expect(error.suggestion).toContain("blocks migrate idempotency --print > idempotency.sqlite.sql");
      expect(existsSync(path.join(dir, folder))).toBe(false);
      const out = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
      try {
        await runMigrate({ cwd: dir, print: true });
        expect(out.mock.calls.map((call) => String(call[0])).join("")).toContain(
          "CREATE TABLE IF NOT EXISTS idempotency_records (",
        );
      } finally {
        out.mockRestore();
      }
    },
    60_000,
  );

  it("a PostgreSQL store's migration is refused in a MySQL project's Drizzle folder too", async () => {
    const dir = await sampleProject("hono-bundler", []);
    await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false, store: "postgres" });
    setDatabase(dir, { dialect: "mysql", layout: "drizzle", migrations: "drizzle" });
    const error = await rejection(runMigrate({ cwd: dir }));
    expect(error.message).toBe(
      `blocks migrate cannot write idempotency's PostgreSQL tables into this project's migrations: its drizzle migrations (drizzle) run on MySQL / MariaDB ("database.dialect" in blocks.json).`,
    );
  }, 60_000);

  it("blocks.json: database.dialect takes postgresql, mysql or sqlite; anything else is named with the allowed values", () => {
    const config = { dir: "src/blocks", alias: null, moduleStyle: "extensionless", packageManager: "npm" };
    for (const dialect of ["postgresql", "mysql", "sqlite"]) {
      expect(
        checkConfig({ ...config, database: { dialect, migrations: "migrations", layout: "drizzle" } }).database.dialect,
      ).toBe(dialect);
    }
    expect(() =>
      checkConfig({ ...config, database: { dialect: "oracle", migrations: "migrations", layout: "sql" } }),
    ).toThrow('Invalid blocks.json: "database.dialect" must be "postgresql" | "mysql" | "sqlite" (got "oracle").');
    expect(() => checkConfig({ ...config, database: { migrations: "migrations", layout: "sql" } })).toThrow(
      '"database.dialect" must be',
    );
    expect(() =>
      checkConfig({ ...config, database: { dialect: "mysql", migrations: "migrations", layout: "node-pg-migrate" } }),
    ).toThrow('"database.layout": "node-pg-migrate" runs on PostgreSQL only, and "database.dialect" is "mysql"');
  });

  it("a project whose one driver is mysql2: init writes database.dialect mysql, a bare add picks MySqlStore, and migrate writes its MySQL file", async () => {
    const dir = await sampleProject("hono-bundler", ["mysql2"]);
    expect(
      (JSON.parse(readFileSync(path.join(dir, "blocks.json"), "utf8")) as { database: DatabaseConfig }).database,
    ).toEqual({ dialect: "mysql", layout: "sql", migrations: "migrations" });
    await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false });
    // The wiring's database is the mysql2 version of the vendored setup/database.ts, recorded in the lock.
    expect(lockVariant(dir)).toBe("idempotency/setup/database-mysql2.ts");
    expect(readFileSync(path.join(dir, "src/blocks/idempotency/setup/database.ts"), "utf8")).toContain(
      "new MySqlStore(mysql2Client(db)",
    );
    expect((await runMigrate({ cwd: dir })).written).toEqual([
      expect.stringMatching(/^migrations\/\d{14}_create_idempotency_records\.mysql\.sql$/),
    ]);
  }, 60_000);

  it("--store postgres in a project whose Drizzle folder runs on MySQL: add writes no PostgreSQL migration into it", async () => {
    const dir = await sampleProject("hono-bundler", ["mysql2", "drizzle-kit"]);
    await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false, store: "postgres" });
    // The wiring's database is the pg version of setup/database.ts, opening a PostgresStore through the setup's PostgreSQL helper.
    expect(lockVariant(dir)).toBe("idempotency/setup/database-pg.ts");
    expect(readFileSync(path.join(dir, "src/blocks/idempotency/setup/database.ts"), "utf8")).toContain("openPostgres(");
    expect(readFileSync(path.join(dir, "src/blocks/idempotency/setup/postgres-database.ts"), "utf8")).toContain(
      "new PostgresStore<Tx>(",
    );
    expect(existsSync(path.join(dir, "drizzle"))).toBe(false);
  }, 60_000);

  it("Drizzle on MySQL: one migration, a breakpoint between statements (the procedure whole, no DELIMITER), a journal entry for MySQL; written once", async () => {
    const table = `mig_${randomUUID().slice(0, 8)}`;
    const dir = await storeProject("mysql", table, { dialect: "mysql", layout: "drizzle", migrations: "drizzle" });
    const first = await runMigrate({ cwd: dir });
    expect(first.written).toEqual([`drizzle/0000_create_${table}.sql`, "drizzle/meta/_journal.json"]);
    const sql = readFileSync(path.join(dir, first.written[0] as string), "utf8");
    expect(
      sql.split("--> statement-breakpoint").map((part) =>
        part
          .trim()
          .split("\n")
          .find((line) => !line.startsWith("--")),
      ),
    ).toEqual([
      `CREATE TABLE IF NOT EXISTS ${table} (`,
      `CREATE TABLE IF NOT EXISTS ${table}_retries (`,
      `DROP PROCEDURE IF EXISTS ${table}_create_v2;`,
      `CREATE PROCEDURE ${table}_create_v2(`,
    ]);
    expect(sql).not.toMatch(/DELIMITER/);
    const journal = JSON.parse(readFileSync(path.join(dir, "drizzle/meta/_journal.json"), "utf8")) as {
      dialect: string;
      entries: Array<{ tag: string; breakpoints: boolean }>;
    };
    expect(journal).toMatchObject({ dialect: "mysql", entries: [{ tag: `0000_create_${table}`, breakpoints: true }] });
    expect((await runMigrate({ cwd: dir })).written).toEqual([]);
  }, 60_000);

  it.runIf(MYSQL_URL)(
    "[MYSQL_URL] drizzle-kit migrate runs the Drizzle migration on MariaDB twice, and the file once more without its bookkeeping",
    async () => {
      const table = `mig_${randomUUID().slice(0, 8)}`;
      mysqlTables.push(table);
      const dir = await storeProject("mysql", table, { dialect: "mysql", layout: "drizzle", migrations: "drizzle" });
      await runMigrate({ cwd: dir });
      const bookkeeping = `__drizzle_${table}`;
      writeFileSync(
        path.join(dir, "drizzle.config.mjs"),
        `export default { dialect: "mysql", out: "./drizzle", dbCredentials: { url: process.env.MYSQL_URL }, migrations: { table: "${bookkeeping}" } };\n`,
      );
      const pool = createPool(MYSQL_URL as string);
      try {
        for (let run = 0; run < 3; run++) {
          if (run === 2) await pool.query(`DROP TABLE ${bookkeeping}`);
          const result = await drizzleKitMigrate(dir);
          expect(result.exitCode, result.all).toBe(0);
        }
        await pool.query(`DROP TABLE ${bookkeeping}`);
        expect(await mySqlObjects(pool, table)).toEqual([table, `${table}_create_v2`, `${table}_retries`]);
      } finally {
        await pool.end();
      }
    },
    90_000,
  );

  it("drizzle-kit migrate runs the Drizzle migration on a SQLite file twice, with the tables there once", async () => {
    const table = `mig_${randomUUID().slice(0, 8)}`;
    const dir = await storeProject("sqlite", table, { dialect: "sqlite", layout: "drizzle", migrations: "drizzle" });
    expect((await runMigrate({ cwd: dir })).written).toEqual([
      `drizzle/0000_create_${table}.sql`,
      "drizzle/meta/_journal.json",
    ]);
    writeFileSync(
      path.join(dir, "drizzle.config.mjs"),
      'export default { dialect: "sqlite", out: "./drizzle", dbCredentials: { url: "file:app.db" } };\n',
    );
    for (let run = 0; run < 2; run++) {
      const result = await drizzleKitMigrate(dir);
      expect(result.exitCode, result.all).toBe(0);
    }
    expect(sqliteTables(path.join(dir, "app.db"), table)).toEqual([table, `${table}_retries`]);
  }, 90_000);

  it("Prisma on MySQL: prisma/migrations/<stamp>_create_<table>/migration.sql, statements ended by semicolons and no DELIMITER (Prisma sends the file whole)", async () => {
    const table = `mig_${randomUUID().slice(0, 8)}`;
    const dir = await storeProject("mysql", table, {
      dialect: "mysql",
      layout: "prisma",
      migrations: "prisma/migrations",
    });
    const { written } = await runMigrate({ cwd: dir });
    expect(written).toEqual([
      expect.stringMatching(new RegExp(`^prisma/migrations/\\d{14}_create_${table}/migration\\.sql$`)),
    ]);
    const sql = readFileSync(path.join(dir, written[0] as string), "utf8");
    expect(sql).not.toMatch(/DELIMITER/);
    expect(sql).toMatch(
      new RegExp(`DROP PROCEDURE IF EXISTS ${table}_create_v2;\\n\\nCREATE PROCEDURE ${table}_create_v2[^]*END;\\n$`),
    );
  }, 60_000);

  it.runIf(MYSQL_URL)(
    "[MYSQL_URL] sent whole as one multi-statement query, as Prisma's schema engine sends a MySQL migration: the Prisma file applies twice; the DELIMITER form would not",
    async () => {
      const table = `mig_${randomUUID().slice(0, 8)}`;
      mysqlTables.push(table);
      const dir = await storeProject("mysql", table, {
        dialect: "mysql",
        layout: "prisma",
        migrations: "prisma/migrations",
      });
      const prisma = readFileSync(path.join(dir, (await runMigrate({ cwd: dir })).written[0] as string), "utf8");
      const connection = await createConnection({ uri: MYSQL_URL as string, multipleStatements: true });
      try {
        for (let run = 0; run < 2; run++) await connection.query(prisma);
        expect(await mySqlObjects(connection, table)).toEqual([table, `${table}_create_v2`, `${table}_retries`]);
        await expect(connection.query(dialectSql("mysql", mySqlSchemaStatements(table), table))).rejects.toThrow(
          /near 'DELIMITER/,
        );
      } finally {
        await connection.end();
      }
    },
    60_000,
  );

  it.runIf(MYSQL_URL).each([
    { layout: "sql", migrations: "migrations" },
    { layout: "drizzle", migrations: "drizzle" },
    { layout: "prisma", migrations: "prisma/migrations" },
  ])(
    "[MYSQL_URL] --apply on MySQL ($layout): the file written, run through the project's mysql2; the second run is already up to date",
    async (database) => {
      const table = `mig_${randomUUID().slice(0, 8)}`;
      mysqlTables.push(table);
      const dir = await storeProject("mysql", table, { dialect: "mysql", ...database });
      vi.stubEnv("MYSQL_URL", MYSQL_URL as string);
      const first = await runMigrate({ cwd: dir, apply: true });
      expect(first.applied).toEqual([{ table, alreadyApplied: false }]);
      const second = await runMigrate({ cwd: dir, apply: true });
      expect(second).toMatchObject({
        written: [],
        existing: first.written.filter((file) => file.endsWith(".sql")),
        applied: [{ table, alreadyApplied: true }],
      });
      const pool = createPool(MYSQL_URL as string);
      try {
        expect(await mySqlObjects(pool, table)).toEqual([table, `${table}_create_v2`, `${table}_retries`]);
      } finally {
        await pool.end();
      }
    },
    60_000,
  );

  it.runIf(MYSQL_URL)(
    "[MYSQL_URL] --apply on MySQL, two at once: they queue on the table's lock, so exactly one creates and the other finds it done",
    async () => {
      const table = `mig_${randomUUID().slice(0, 8)}`;
      mysqlTables.push(table);
      const dir = await storeProject("mysql", table);
      await runMigrate({ cwd: dir });
      vi.stubEnv("MYSQL_URL", MYSQL_URL as string);
      const runs = await Promise.all([runMigrate({ cwd: dir, apply: true }), runMigrate({ cwd: dir, apply: true })]);
      expect(
        runs.map((run) => run.applied[0]).sort((a, b) => Number(a?.alreadyApplied) - Number(b?.alreadyApplied)),
      ).toEqual([
        { table, alreadyApplied: false },
        { table, alreadyApplied: true },
      ]);
    },
    60_000,
  );

  it.runIf(MYSQL_URL)(
    "[MYSQL_URL] --apply on MySQL: a failing statement is named with the file, and the lock is let go (the fixed file then applies)",
    async () => {
      const table = `mig_${randomUUID().slice(0, 8)}`;
      mysqlTables.push(table);
      const dir = await storeProject("mysql", table);
      const { written } = await runMigrate({ cwd: dir });
      const file = path.join(dir, written[0] as string);
      const good = readFileSync(file, "utf8");
      writeFileSync(file, `${good}\nCREATE TABLE ${table}_broken (;\n`);
      vi.stubEnv("MYSQL_URL", MYSQL_URL as string);
      const error = await rejection(runMigrate({ cwd: dir, apply: true }));
      expect(error.code).toBe("MIGRATION_FAILED");
      expect(error.message).toBe(`Running ${written[0]} on MYSQL_URL failed.`);
      expect(error.suggestion).toContain("every statement is safe to run again");
      writeFileSync(file, good);
      expect((await runMigrate({ cwd: dir, apply: true })).applied).toEqual([{ table, alreadyApplied: true }]);
    },
    60_000,
  );

  it.each([
    { client: "better-sqlite3", variable: "SQLITE_PATH", target: (file: string) => file },
    { client: "libsql", variable: "LIBSQL_URL", target: (file: string) => `file:${file}` },
  ] as const)(
    "--apply on SQLite through $client ($variable): the tables made once; the second run is already up to date",
    async ({ client, variable, target }) => {
      const table = `mig_${randomUUID().slice(0, 8)}`;
      const dir = await storeProject("sqlite", table, undefined, client);
      vi.stubEnv(variable, target("db/app.db"));
      const first = await runMigrate({ cwd: dir, apply: true });
      expect(first.applied).toEqual([{ table, alreadyApplied: false }]);
      expect((await runMigrate({ cwd: dir, apply: true })).applied).toEqual([{ table, alreadyApplied: true }]);
      expect(sqliteTables(path.join(dir, "db/app.db"), table)).toEqual([table, `${table}_retries`]);
    },
    60_000,
  );

  it("--apply on SQLite: a failing file is rolled back whole and named", async () => {
    const table = `mig_${randomUUID().slice(0, 8)}`;
    const dir = await storeProject("sqlite", table);
    const { written } = await runMigrate({ cwd: dir });
    const file = path.join(dir, written[0] as string);
    writeFileSync(file, `${readFileSync(file, "utf8")}\nCREATE TABLE broken (;\n`);
    vi.stubEnv("SQLITE_PATH", "app.db");
    const error = await rejection(runMigrate({ cwd: dir, apply: true }));
    expect(error.code).toBe("MIGRATION_FAILED");
    expect(error.message).toBe(`Running ${written[0]} on app.db failed; the transaction was rolled back.`);
    expect(sqliteTables(path.join(dir, "app.db"), table)).toEqual([]);
  }, 60_000);

  it("--apply on MySQL without MYSQL_URL names the variable", async () => {
    vi.stubEnv("MYSQL_URL", "");
    const dir = await storeProject("mysql", "idempotency_records");
    const error = await rejection(runMigrate({ cwd: dir, apply: true }));
    expect(error.code).toBe("MISSING_DATABASE_URL");
    expect(error.message).toBe("--apply on MySqlStore needs MYSQL_URL.");
  }, 60_000);

  it("a --table MySQL would refuse is a clear error, and nothing is written", async () => {
    const dir = await storeProject("mysql", "idempotency_records");
    const error = await rejection(runMigrate({ cwd: dir, table: "a_table_name_longer_than_forty_characters_x" }));
    expect(error.code).toBe("INVALID_TABLE_NAME");
    expect(error.message).toContain("at most 40");
    expect(existsSync(path.join(dir, "migrations"))).toBe(false);
  }, 60_000);
});
