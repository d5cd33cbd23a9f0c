// `add idempotency --store redis|dynamodb` copies that store alone: its files and packages, no PostgreSQL store, client,
// migration or `pg`; the project type-checks; `migrate`, `doctor`, `diff` and `update` ask nothing of PostgreSQL.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { recordedFeatures } from "../../cli/add/choose-features.js";
import { runAdd } from "../../cli/commands/add.js";
import { runDiff } from "../../cli/commands/diff.js";
import { runDoctor } from "../../cli/commands/doctor.js";
import { runMigrate } from "../../cli/commands/migrate.js";
import { runUpdate } from "../../cli/commands/update.js";
import { configureOutput } from "../../cli/utils/logger.js";
import { rejection } from "./helpers.js";
import { sampleProject, typeCheck } from "./wiring-projects.js";

const BLOCK = "src/blocks/idempotency";

/** What only the PostgreSQL store brings: its store, schema, statements, the default pg client (and its tests), the advisory-lock maintenance and its test, and the setup's PostgreSQL helper the database variants share. */
const POSTGRES_FILES = [
  "maintenance.test.ts",
  "maintenance.ts",
  "setup/locked-jobs.ts",
  "setup/postgres-database.ts",
  "stores/clients/pg.test.ts",
  "stores/clients/pg.ts",
  "testing/pglite.ts",
  "stores/clients/transaction-guard.test.ts",
  "stores/clients/transaction-guard.ts",
  "stores/postgres-errors.ts",
  "stores/postgres-maintenance.ts",
  "stores/postgres-rows.ts",
  "stores/postgres-schema.ts",
  "stores/postgres-store.ts",
  "stores/prepared-statements.ts",
  "stores/record-row.ts",
].map((file) => `${BLOCK}/${file}`);

const STORES = [
  {
    store: "redis",
    features: ["client-ioredis", "redis-store"],
    files: [
      "setup/recovery-jobs.test.ts",
      "setup/recovery-jobs.ts",
      "stores/redis-client.ts",
      "stores/redis-records.ts",
      "stores/redis-script-calls.ts",
      "stores/redis-store-scripts.ts",
      "stores/redis-store.ts",
    ],
    dependencies: ["ioredis@^5.11.1"],
  },
  {
    store: "dynamodb",
    files: [
      "setup/recovery-jobs.test.ts",
      "setup/recovery-jobs.ts",
      "stores/dynamodb-counters.ts",
      "stores/dynamodb-items.ts",
      "stores/dynamodb-recovery.ts",
      "stores/dynamodb-store.ts",
      "stores/dynamodb-table.ts",
    ],
    dependencies: ["@aws-sdk/client-dynamodb@^3.1178.0", "@aws-sdk/lib-dynamodb@^3.1178.0"],
  },
  {
    store: "mysql",
    files: [
      "setup/recovery-jobs.test.ts",
      "setup/recovery-jobs.ts",
      "stores/clients/mysql2.ts",
      "stores/clients/transaction-guard.test.ts",
      "stores/clients/transaction-guard.ts",
      "stores/mysql-errors.ts",
      "stores/mysql-maintenance.ts",
      "stores/mysql-rows.ts",
      "stores/mysql-schema.ts",
      "stores/mysql-store.ts",
      "stores/record-row.ts",
      "stores/takeover-recovery.ts",
    ],
    dependencies: ["mysql2@^3.25.0"],
  },
  {
    store: "sqlite",
    features: ["client-better-sqlite3", "sqlite-store"],
    files: [
      "setup/recovery-jobs.test.ts",
      "setup/recovery-jobs.ts",
      "stores/clients/better-sqlite3.ts",
      "stores/clients/transaction-guard.test.ts",
      "stores/clients/transaction-guard.ts",
      "stores/record-row.ts",
      "stores/sqlite-schema.ts",
      "stores/sqlite-store.ts",
      "stores/takeover-recovery.ts",
    ],
    dependencies: ["better-sqlite3@^12.11.1"],
    devDependencies: ["@types/better-sqlite3@^9.6.0"],
  },
];

const add = (cwd: string, options: Partial<Parameters<typeof runAdd>[0]> = {}) =>
  runAdd({ blocks: ["idempotency"], cwd, yes: true, install: false, ...options });
const lockOf = (dir: string) =>
  JSON.parse(readFileSync(path.join(dir, "blocks.lock.json"), "utf8")) as {
    blocks: Record<string, { files: Record<string, string>; variants?: Record<string, string> }>;
    migrations: Record<string, string>;
  };
/** The registry's text of a setup variant (copied as it is to its fixed target). */
const variantText = (file: string) =>
  readFileSync(path.join(import.meta.dirname, "../../registry/idempotency/setup", file), "utf8");
const targets = (result: Awaited<ReturnType<typeof add>>) => result.files.map((file) => file.target).sort();

describe("blocks add --store: only the chosen store, with its packages", () => {
  it.each(STORES)(
    "--store $store: the PostgreSQL files are swapped for the store's, the packages are the store's, no migration, and it type-checks",
    async ({ store, features, files, dependencies, devDependencies }) => {
      const postgres = await add(await sampleProject("express-nodenext", []));
      expect(postgres.features).toContain("postgres-store");
      expect(postgres.dependencies.dependencies).toEqual(["pg@^8.23.1"]);
      expect(targets(postgres)).toEqual(expect.arrayContaining(POSTGRES_FILES));

      const dir = await sampleProject("express-nodenext", []);
      const result = await add(dir, { store });
      expect(result.features).toEqual(features ?? [`${store}-store`]);
      const storeFiles = files.map((file) => `${BLOCK}/${file}`);
      // The wiring opens the chosen store: setup/database.ts is that store's variant, recorded in the lock.
      const variant = `database-${store === "mysql" ? "mysql2" : store === "sqlite" ? "better-sqlite3" : store}.ts`;
      expect(lockOf(dir).blocks.idempotency?.variants?.["idempotency/setup/database.ts"]).toBe(
        `idempotency/setup/${variant}`,
      );
      // (the express-nodenext project imports with ".js": the only change add makes to the registry's text)
      expect(readFileSync(path.join(dir, BLOCK, "setup/database.ts"), "utf8").replaceAll('.js";', '";')).toBe(
        variantText(variant),
      );
      const expected = [
        ...targets(postgres).filter((target) => !POSTGRES_FILES.includes(target)),
        ...storeFiles,
      ].sort();
      expect(targets(result)).toEqual(expected);
      expect(Object.keys(lockOf(dir).blocks.idempotency?.files ?? {}).sort()).toEqual(
        expected.filter((target) => target.startsWith(`${BLOCK}/`)),
      );
      for (const file of POSTGRES_FILES.filter((target) => !storeFiles.includes(target)))
        expect(existsSync(path.join(dir, file)), file).toBe(false);

      expect(result.dependencies.dependencies).toEqual(dependencies);
      if (devDependencies) expect(result.dependencies.devDependencies).toEqual(expect.arrayContaining(devDependencies));
      const everyPackage = [...result.dependencies.dependencies, ...result.dependencies.devDependencies].join(" ");
      expect(everyPackage).not.toMatch(/(^| )(pg|@types\/pg|@electric-sql\/pglite|@types\/emscripten)@/);

      expect(result.migrations).toEqual([]);
      expect(lockOf(dir).migrations).toEqual({});
      expect(existsSync(path.join(dir, "migrations"))).toBe(false);

      // The index re-exports only what was copied: no line naming the PostgreSQL store is left to break the build.
      const index = readFileSync(path.join(dir, BLOCK, "index.ts"), "utf8");
      expect(index).not.toMatch(/postgres|prepared-statements/i);
      expect(index).toContain('export { IdempotencyHandler } from "./handler.js";');
      expect(typeCheck(dir)).toEqual([]);
    },
    180_000,
  );

  it("a PostgreSQL client cannot come with another store: asked for, it is refused; detected, it is left out", async () => {
    const dir = await sampleProject("hono-bundler", ["kysely"]);
    const refused = await rejection(add(dir, { store: "redis", client: "kysely" }));
    expect(refused).toMatchObject({
      code: "INVALID_OPTION",
      message: expect.stringContaining("--client kysely needs --store postgres"),
    });
    const result = await add(dir, { store: "redis" });
    expect(result.features).toEqual(["client-ioredis", "redis-store"]);
    expect(targets(result).filter((target) => target.includes("/clients/"))).toEqual([]);
  }, 60_000);

  it("--store redis --client node-redis: RedisStore on node-redis, with redis and without ioredis; detected from package.json; refused without --store redis", async () => {
    const dir = await sampleProject("express-nodenext", []);
    const result = await add(dir, { store: "redis", client: "node-redis" });
    expect(result.features).toEqual(["client-node-redis", "redis-store"]);
    expect(result.dependencies.dependencies).toEqual(["redis@^6.4.0"]);
    expect([...result.dependencies.dependencies, ...result.dependencies.devDependencies].join(" ")).not.toMatch(
      /ioredis/,
    );
    expect(lockOf(dir).blocks.idempotency?.variants?.["idempotency/setup/database.ts"]).toBe(
      "idempotency/setup/database-node-redis.ts",
    );
    expect(readFileSync(path.join(dir, BLOCK, "setup/database.ts"), "utf8").replaceAll('.js";', '";')).toBe(
      variantText("database-node-redis.ts"),
    );
    expect(readFileSync(path.join(dir, BLOCK, "setup/database.test.ts"), "utf8")).toContain(
      "expect(db.isOpen).toBe(false)",
    );
    expect(typeCheck(dir)).toEqual([]);
    // update keeps the client: the variant it was added with says which, and it asks for redis, not ioredis.
    const update = await runUpdate({ cwd: dir, dryRun: true });
    expect(update.files.filter((file) => file.status !== "unchanged")).toEqual([]);
    expect(update.install.join(" ")).toMatch(/redis@\^6\.4\.0/);
    expect(update.install.join(" ")).not.toMatch(/ioredis/);

    // A project that declares node-redis (the `redis` package) gets it with --store redis alone; --client ioredis overrides.
    const declared = await sampleProject("hono-bundler", ["redis"]);
    expect((await add(declared, { store: "redis" })).features).toEqual(["client-node-redis", "redis-store"]);
    const overridden = await sampleProject("hono-bundler", ["redis"]);
    const onIoredis = await add(overridden, { store: "redis", client: "ioredis" });
    expect(onIoredis.features).toEqual(["client-ioredis", "redis-store"]);
    expect(lockOf(overridden).blocks.idempotency?.variants?.["idempotency/setup/database.ts"]).toBe(
      "idempotency/setup/database-redis.ts",
    );
    // A PostgreSQL project that happens to declare node-redis keeps pg.
    const onPostgres = await sampleProject("hono-bundler", ["redis"]);
    expect((await add(onPostgres)).features).not.toContain("client-node-redis");

    const refused = await rejection(add(await sampleProject("hono-bundler", []), { client: "node-redis" }));
    expect(refused).toMatchObject({
      code: "INVALID_OPTION",
      message: expect.stringContaining("--client node-redis needs --store redis"),
    });
  }, 180_000);

  it("no Redis cache in front of a Redis store: asked for, it is refused by name; detected (ioredis declared), it is left out with its file and package", async () => {
    const refused = await rejection(add(await sampleProject("hono-bundler", []), { store: "redis", cache: "redis" }));
    expect(refused).toMatchObject({
      code: "INVALID_OPTION",
      message: expect.stringMatching(
        /^--cache redis \(Redis cache in front of the store .*\) does not go with --store redis \(RedisStore: /,
      ),
    });
    const dir = await sampleProject("hono-bundler", ["redis", "ioredis"]);
    const result = await add(dir, { store: "redis" });
    expect(result.features).toEqual(["client-node-redis", "redis-store"]);
    expect(targets(result)).not.toContain(`${BLOCK}/caches/redis-cache.ts`);
    expect(readFileSync(path.join(dir, BLOCK, "setup/cache.ts"), "utf8")).not.toContain("RedisCache");
    // In front of another store it still comes when ioredis is declared.
    const onMySql = await add(await sampleProject("hono-bundler", ["ioredis"]), { store: "mysql" });
    expect(onMySql.features).toContain("cache");
  }, 120_000);

  it("switching Redis clients: add --client node-redis on an ioredis project rewrites setup/database.ts, and update keeps what was chosen, also for a lock that names no client", async () => {
    const variantOf = (dir: string) => lockOf(dir).blocks.idempotency?.variants?.["idempotency/setup/database.ts"];
    const dir = await sampleProject("hono-bundler", []);
    await add(dir, { store: "redis" });
    expect(variantOf(dir)).toBe("idempotency/setup/database-redis.ts");
    const switched = await add(dir, { store: "redis", client: "node-redis" });
    expect(switched.features).toEqual(["client-node-redis", "redis-store"]);
    expect(variantOf(dir)).toBe("idempotency/setup/database-node-redis.ts");
    expect(readFileSync(path.join(dir, BLOCK, "setup/database.ts"), "utf8")).toContain('from "redis";');
    // A later add without --client keeps it (carried from the lock), as update does.
    await add(dir);
    expect(variantOf(dir)).toBe("idempotency/setup/database-node-redis.ts");
    const update = await runUpdate({ cwd: dir, dryRun: true });
    expect(update.files.filter((file) => file.status !== "unchanged")).toEqual([]);

    // A lock that names no client (its files and variants from before the Redis clients were features) is on the default one.
    const locked = lockOf(dir).blocks.idempotency;
    const block = JSON.parse(
      readFileSync(path.join(import.meta.dirname, "../../registry/idempotency/block.json"), "utf8"),
    );
    expect([...recordedFeatures(block, { ...locked, variants: {} } as never)].sort()).toEqual([
      "client-ioredis",
      "redis-store",
    ]);
  }, 180_000);

  it.each([
    {
      orm: "drizzle-orm",
      feature: "client-drizzle-mysql",
      files: ["stores/clients/drizzle-guard.ts", "stores/clients/drizzle-mysql.ts"],
      pg: "stores/clients/drizzle.ts",
      variant: "database-drizzle-mysql2.ts",
    },
    {
      orm: "kysely",
      feature: "client-kysely-mysql",
      files: ["stores/clients/kysely-guard.ts", "stores/clients/kysely-mysql.ts"],
      pg: "stores/clients/kysely.ts",
      variant: "database-kysely-mysql2.ts",
    },
  ])(
    "--store mysql in a project on $orm with mysql2: its MySQL adapter comes, not the PostgreSQL one, the wiring is on the app's $orm, and it type-checks",
    async ({ orm, feature, files, pg, variant }) => {
      const dir = await sampleProject("express-nodenext", [orm, "mysql2"]);
      const result = await add(dir, { store: "mysql" });
      expect([...result.features].sort()).toEqual([feature, "mysql-store"]);
      expect(targets(result)).toEqual(expect.arrayContaining(files.map((file) => `${BLOCK}/${file}`)));
      expect(targets(result)).not.toContain(`${BLOCK}/${pg}`);
      // setup/database.ts opens the store on the ORM (so executeInTransaction's tx is the app's), not on a mysql2 pool of its own.
      expect(lockOf(dir).blocks.idempotency?.variants?.["idempotency/setup/database.ts"]).toBe(
        `idempotency/setup/${variant}`,
      );
      expect(readFileSync(path.join(dir, BLOCK, "setup/database.ts"), "utf8").replaceAll('.js";', '";')).toBe(
        variantText(variant),
      );
      // The ORM and mysql2 are the project's already: nothing to install but what the vendored tests run on.
      expect(result.dependencies.dependencies).toEqual([]);
      expect(
        typeCheck(dir, [
          ...files.map((file) => `${BLOCK}/${file}`),
          "src/idempotency-setup.ts",
          `${BLOCK}/setup/database.ts`,
          `${BLOCK}/setup/database.test.ts`,
        ]),
      ).toEqual([]);
      // Without the MySQL store the adapter is refused by name, not silently dropped.
      const refused = await rejection(
        add(await sampleProject("hono-bundler", [orm]), { client: feature.replace("client-", "") }),
      );
      expect(refused).toMatchObject({
        code: "INVALID_OPTION",
        message: expect.stringContaining(`--client ${feature.replace("client-", "")} needs --store mysql`),
      });
    },
    180_000,
  );

  it.each([
    { orm: "drizzle-orm", postgres: "database-drizzle-node-postgres.ts", mysql: "database-drizzle-mysql2.ts" },
    { orm: "kysely", postgres: "database-kysely.ts", mysql: "database-kysely-mysql2.ts" },
  ])(
    "$orm with both pg and mysql2: PostgreSQL (blocks.json's database) gets the PostgreSQL wiring on the ORM; --store mysql the MySQL one",
    async ({ orm, postgres, mysql }) => {
      const variantOf = (dir: string) => lockOf(dir).blocks.idempotency?.variants?.["idempotency/setup/database.ts"];
      const onPostgres = await sampleProject("hono-bundler", [orm, "pg", "mysql2"]);
      expect((await add(onPostgres)).features).toContain("postgres-store");
      expect(variantOf(onPostgres)).toBe(`idempotency/setup/${postgres}`);
      const onMySql = await sampleProject("hono-bundler", [orm, "pg", "mysql2"]);
      expect((await add(onMySql, { store: "mysql" })).features).toContain("mysql-store");
      expect(variantOf(onMySql)).toBe(`idempotency/setup/${mysql}`);
    },
    120_000,
  );

  it("--store names one of postgres, redis, dynamodb, mysql and sqlite; `none` is not a store", async () => {
    const error = await rejection(add(await sampleProject("hono-bundler", []), { store: "none" }));
    expect(error.code).toBe("INVALID_OPTION");
    expect(error.message).toBe('--store takes "postgres", "redis", "dynamodb", "mysql", "sqlite", not "none".');
  }, 60_000);
});

describe("a project on RedisStore or DynamoDB: migrate, doctor, diff and update ask nothing of PostgreSQL", () => {
  // tempProject silences the CLI; the tests that read its output turn it back on.
  afterEach(() => {
    vi.restoreAllMocks();
    configureOutput({ silent: true });
  });

  it("migrate on a RedisStore project says there is nothing to migrate and writes nothing; --store postgres still gives the SQL", async () => {
    const dir = await sampleProject("hono-bundler", []);
    await add(dir, { store: "redis" });
    configureOutput({ silent: false });
    const out: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (out.push(String(chunk)), true));
    const result = await runMigrate({ cwd: dir });
    vi.restoreAllMocks();
    expect(result).toMatchObject({ written: [], existing: [], noSchema: ["idempotency"] });
    expect(out.join("")).toContain(
      "idempotency: nothing to migrate: its store, RedisStore (--store redis), keeps no schema.",
    );
    expect(existsSync(path.join(dir, "migrations"))).toBe(false);
    const sql = await runMigrate({ cwd: dir, store: "postgres" });
    expect(sql.written).toEqual([expect.stringMatching(/^migrations\/\d+_create_idempotency_records\.sql$/)]);
  }, 60_000);

  it("migrate on a DynamoDB project writes the table definition, never SQL", async () => {
    const dir = await sampleProject("hono-bundler", []);
    await add(dir, { store: "dynamodb" });
    const result = await runMigrate({ cwd: dir });
    expect(result.written).toEqual([
      "dynamodb/idempotency_records.create-table.json",
      "dynamodb/idempotency_records.update-time-to-live.json",
    ]);
    expect(existsSync(path.join(dir, "migrations"))).toBe(false);
  }, 60_000);

  it.each(["redis", "dynamodb"])(
    "doctor on a --store %s project checks no PostgreSQL table, even with a database URL",
    async (store) => {
      const dir = await sampleProject("hono-bundler", []);
      await add(dir, { store });
      // Nothing listens there: a PostgreSQL check would report that it cannot connect.
      const { findings, checkedDatabase } = await runDoctor({
        cwd: dir,
        databaseUrl: "postgres://postgres@127.0.0.1:1/none",
      });
      expect(findings.filter((item) => item.rule === "migration-applied")).toEqual([]);
      expect(checkedDatabase).toBe(false);
    },
    60_000,
  );

  it("doctor on a PostgreSQL project still checks its table", async () => {
    const dir = await sampleProject("hono-bundler", []);
    await add(dir);
    const { findings } = await runDoctor({ cwd: dir, databaseUrl: "postgres://postgres@127.0.0.1:1/none" });
    expect(findings.filter((item) => item.rule === "migration-applied")).toEqual([
      expect.objectContaining({ message: expect.stringContaining("cannot connect") }),
    ]);
  }, 60_000);

  it.each(["redis", "dynamodb"])(
    "diff and update on a --store %s project bring no PostgreSQL file back, and ask for the store's packages only",
    async (store) => {
      const dir = await sampleProject("hono-bundler", []);
      await add(dir, { store });
      expect((await runDiff({ cwd: dir })).changes).toEqual([]);
      const update = await runUpdate({ cwd: dir, dryRun: true });
      expect(update.files.filter((file) => file.status !== "unchanged")).toEqual([]);
      expect(update.install.join(" ")).toMatch(store === "redis" ? /ioredis@/ : /@aws-sdk\/client-dynamodb@/);
      expect(update.install.join(" ")).not.toMatch(/ pg@/);
      // An edit of the vendored index still shows as the user's, against the index without PostgreSQL.
      const index = path.join(dir, BLOCK, "index.ts");
      writeFileSync(index, `${readFileSync(index, "utf8")}// ours\n`);
      expect((await runDiff({ cwd: dir })).changes).toEqual([
        expect.objectContaining({ file: `${BLOCK}/index.ts`, status: "edited" }),
      ]);
    },
    60_000,
  );
});

describe("add's report", () => {
  // tempProject silences the CLI; the tests that read its output turn it back on.
  afterEach(() => {
    vi.restoreAllMocks();
    configureOutput({ silent: true });
  });

  it("a Prisma wiring: the last steps point at its TO CHANGE comment, by line", async () => {
    const dir = await sampleProject("hono-bundler", ["@prisma/client"]);
    configureOutput({ silent: false });
    const out: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (out.push(String(chunk)), true));
    await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false });
    vi.restoreAllMocks();
    // The Prisma wiring is the Prisma version of the vendored setup/database.ts: its comment is there.
    const database = `${BLOCK}/setup/database.ts`;
    const setup = readFileSync(path.join(dir, database), "utf8");
    expect(setup).toBe(variantText("database-prisma.ts"));
    const line = setup.split("\n").findIndex((text) => text.includes("// TO CHANGE:")) + 1;
    expect(line).toBeGreaterThan(0);
    const step = out
      .join("")
      .split("\n")
      .find((text) => text.includes("do what the TO CHANGE comment says"));
    expect(step).toContain("before it runs");
    expect(step).toContain(`${database}:${line}`);
  }, 60_000);

  it("a wiring without one says nothing of it", async () => {
    const dir = await sampleProject("hono-bundler", ["postgres"]);
    configureOutput({ silent: false });
    const out: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (out.push(String(chunk)), true));
    await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false });
    vi.restoreAllMocks();
    // The wiring's parts in the block's own names (block.json's setup.entry and doctor.maintenance).
    // The setup file only re-exports: the line names what to call from it, and where its parts are edited.
    expect(out.join("")).toContain(
      "import from src/idempotency-setup.ts and call createIdempotency(), startMaintenance() (or the cron entry src/jobs/idempotency-maintenance.ts)",
    );
    expect(out.join("")).toContain("the parts it composes are yours to edit in src/blocks/idempotency/setup/");
    expect(out.join("")).not.toContain("TO CHANGE");
  }, 60_000);
});
