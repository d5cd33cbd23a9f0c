// `add idempotency` in sample projects with each database client or store: the wiring it writes type-checks, and runs.
import { cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { execa } from "execa";
import { createPool } from "mysql2/promise";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { runAdd } from "../../cli/commands/add.js";
import { mySqlDropStatements } from "../../registry/idempotency/stores/mysql-schema.js";
import { startLocalDynamoDb } from "../idempotency/support/dynamodb-store-harness.js";
import { sampleProject, typeCheck } from "./wiring-projects.js";

/** A Drizzle schema, as apps pass it to `drizzle()`: the wiring must take the app's own typed database. */
const DRIZZLE_SCHEMA = [
  'import { integer, pgTable, text } from "drizzle-orm/pg-core";',
  'const schema = { orders: pgTable("orders", { id: text("id").primaryKey(), amount: integer("amount") }) };',
];

/** The same on MySQL. */
const DRIZZLE_MYSQL_SCHEMA = [
  'import { int, mysqlTable, varchar } from "drizzle-orm/mysql-core";',
  'const schema = { orders: mysqlTable("orders", { id: varchar("id", { length: 64 }).primaryKey(), amount: int("amount") }) };',
];

/** The scope of an operation an app runs in a transaction, writing through its own ORM's `tx`. */
const SCOPE = 'const SCOPE = { operation: "orders:create", userId: "u_1", key: "k_1", payload: {} };';

type Wiring = {
  name: string;
  /** The version of setup/database.ts `add` must choose for this client (registry/idempotency/setup/<variant>), and record in the lock. */
  variant: string;
  /** What the project declares (and has installed): how `add` detects the client. */
  packages: string[];
  store?: string;
  /** Lines the vendored setup/database.ts (the wiring's client) must hold. */
  expected: string[];
  /** An app module passing its own client, typed as apps type it, to `createIdempotency`. */
  app?: string[];
};

const WIRINGS: Wiring[] = [
  {
    name: "pg",
    variant: "database-pg.ts",
    packages: ["pg"],
    expected: ['from "pg";', "new Pool({ connectionString: url })", "pgClient(db)"],
    app: ['import { Pool } from "pg";', "createIdempotency({ db: new Pool({ max: 20 }) });"],
  },
  {
    name: "postgres.js",
    variant: "database-postgres-js.ts",
    packages: ["postgres"],
    expected: ["postgres(url)", "postgresJsClient(db)", "sql.reserve()"],
    app: [
      'import postgres from "postgres";',
      'createIdempotency({ db: postgres("postgres://localhost/app", { max: 20 }) });',
    ],
  },
  {
    name: "Drizzle on node-postgres",
    variant: "database-drizzle-node-postgres.ts",
    packages: ["drizzle-orm", "pg"],
    expected: ['from "drizzle-orm/node-postgres";', "lock: db.$client"],
    app: [
      ...DRIZZLE_SCHEMA,
      'import { drizzle } from "drizzle-orm/node-postgres";',
      'import { Pool } from "pg";',
      "createIdempotency({ db: drizzle({ client: new Pool(), schema }) });",
    ],
  },
  {
    name: "Drizzle on postgres.js",
    variant: "database-drizzle-postgres-js.ts",
    packages: ["drizzle-orm", "postgres"],
    expected: ['from "drizzle-orm/postgres-js";', "reservedLock(db.$client)"],
    app: [
      ...DRIZZLE_SCHEMA,
      'import { drizzle } from "drizzle-orm/postgres-js";',
      'import postgres from "postgres";',
      "createIdempotency({ db: drizzle({ client: postgres(), schema }) });",
    ],
  },
  {
    name: "Kysely",
    variant: "database-kysely.ts",
    packages: ["kysely"],
    expected: ["new PostgresDialect({ pool: new Pool(", "kyselyClient(db)", "db.connection()"],
    app: [
      'import { Kysely, PostgresDialect } from "kysely";',
      'import { Pool } from "pg";',
      "type DB = { orders: { id: string; amount: number } };",
      "createIdempotency({ db: new Kysely<DB>({ dialect: new PostgresDialect({ pool: new Pool() }) }) });",
    ],
  },
  {
    name: "Prisma",
    variant: "database-prisma.ts",
    packages: ["@prisma/client"],
    expected: ["new PrismaPg(pool)", "prismaClient(db.prisma", "TO CHANGE"],
  },
  {
    name: "RedisStore",
    variant: "database-redis.ts",
    packages: [],
    store: "redis",
    expected: ["new RedisStore(db, { table: IDEMPOTENCY_TABLE })", "recoveryJobs(handler, logger)"],
  },
  {
    // No --client: `redis` (node-redis) in package.json is how add detects it.
    name: "RedisStore on node-redis",
    variant: "database-node-redis.ts",
    packages: ["redis"],
    store: "redis",
    expected: [
      'from "redis";',
      "createClient({ url })",
      "new RedisStore(db, { table: IDEMPOTENCY_TABLE })",
      "end: () => db.close()",
    ],
    app: [
      'import { createClient } from "redis";',
      'createIdempotency({ db: createClient({ url: "redis://127.0.0.1:6379" }) });',
    ],
  },
  {
    name: "DynamoDbStore",
    variant: "database-dynamodb.ts",
    packages: [],
    store: "dynamodb",
    expected: ["new DynamoDbStore(db, { table: IDEMPOTENCY_TABLE })", "recoveryJobs(handler, logger)"],
  },
  {
    name: "MySqlStore",
    variant: "database-mysql2.ts",
    packages: [],
    store: "mysql",
    expected: [
      "createPool(url)",
      "new MySqlStore(mysql2Client(db), { table: IDEMPOTENCY_TABLE })",
      "recoveryJobs(handler, logger, 300_000, { cleanupEveryMs: 3_600_000 })",
      "process.env.MYSQL_URL",
    ],
    app: [
      'import { createPool } from "mysql2/promise";',
      'createIdempotency({ db: createPool({ uri: "mysql://root@127.0.0.1/app", connectionLimit: 20 }) });',
    ],
  },
  {
    // No --store: mysql2 in package.json makes blocks.json's database MySQL, and `add` takes MySqlStore on the app's ORM.
    name: "MySqlStore on Drizzle",
    variant: "database-drizzle-mysql2.ts",
    packages: ["drizzle-orm", "mysql2"],
    expected: [
      'from "drizzle-orm/mysql2";',
      "drizzle({ client: createPool(url) })",
      "new MySqlStore(drizzleMySqlClient(db), { table: IDEMPOTENCY_TABLE })",
      "process.env.MYSQL_URL",
    ],
    app: [
      ...DRIZZLE_MYSQL_SCHEMA,
      SCOPE,
      'import { drizzle } from "drizzle-orm/mysql2";',
      'import { createPool } from "mysql2/promise";',
      'const db = drizzle({ client: createPool("mysql://root@127.0.0.1/app"), schema, mode: "default" });',
      // The operation writes through the app's own Drizzle transaction.
      'void createIdempotency({ db }).handler.executeInTransaction(SCOPE, ({ tx }) => tx.insert(schema.orders).values({ id: "o_1", amount: 100 }));',
      // drizzle(url) builds mysql2's callback pool: taken too.
      'createIdempotency({ db: drizzle("mysql://root@127.0.0.1/app") });',
    ],
  },
  {
    name: "MySqlStore on Kysely",
    variant: "database-kysely-mysql2.ts",
    packages: ["kysely", "mysql2"],
    expected: [
      "new MysqlDialect({ pool: createPool(url) })",
      "new MySqlStore(kyselyMySqlClient(db), { table: IDEMPOTENCY_TABLE })",
      "process.env.MYSQL_URL",
    ],
    app: [
      'import { Kysely, MysqlDialect } from "kysely";',
      'import { createPool } from "mysql2";',
      "type DB = { orders: { id: string; amount: number } };",
      SCOPE,
      'const db = new Kysely<DB>({ dialect: new MysqlDialect({ pool: createPool("mysql://root@127.0.0.1/app") }) });',
      // The operation writes through the app's own Kysely transaction.
      'void createIdempotency({ db }).handler.executeInTransaction(SCOPE, ({ tx }) => tx.insertInto("orders").values({ id: "o_1", amount: 100 }).execute());',
    ],
  },
  {
    name: "SqliteStore on better-sqlite3",
    variant: "database-better-sqlite3.ts",
    packages: [],
    store: "sqlite",
    expected: [
      "new SqliteStore(betterSqlite3Client(db), { table: IDEMPOTENCY_TABLE })",
      "recoveryJobs(handler, logger, 300_000, { cleanupEveryMs: 3_600_000 })",
      'process.env.SQLITE_PATH ?? "./data/idempotency.db"',
    ],
  },
  {
    name: "SqliteStore on libSQL",
    variant: "database-libsql.ts",
    packages: ["@libsql/client"],
    store: "sqlite",
    expected: [
      "new SqliteStore(libsqlClient(db), { table: IDEMPOTENCY_TABLE })",
      "process.env.LIBSQL_URL",
      "process.env.LIBSQL_AUTH_TOKEN",
    ],
    app: [
      'import { createClient } from "@libsql/client";',
      'createIdempotency({ db: createClient({ url: "file:app.db" }) });',
    ],
  },
];

/** On MySQL: the store asked for, or found from mysql2 in package.json (blocks.json's database). */
const onMySql = (wiring: Wiring) => wiring.store === "mysql" || wiring.packages.includes("mysql2");
const SQL_WIRINGS = WIRINGS.filter((wiring) => onMySql(wiring) || wiring.store === "sqlite");

const MODULE_SYSTEMS = [
  { fixture: "express-nodenext", name: "ESM NodeNext" },
  { fixture: "fastify-commonjs", name: "CommonJS" },
  { fixture: "hono-bundler", name: "bundler" },
];

const SETUP = "src/blocks/idempotency/setup";

/**
 * What `add` writes for the wiring: the app's two files and the block's setup folder (the chosen variants, their
 * composition and the wiring's test, setup/database.test.ts); the check takes in every block file they import.
 * (The block as a whole is checked by the e2e suites.)
 */
function wiringFiles(dir: string): string[] {
  const setup = readdirSync(path.join(dir, SETUP), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => `${SETUP}/${file.split(path.sep).join("/")}`);
  return ["src/idempotency-setup.ts", "src/jobs/idempotency-maintenance.ts", ...setup.sort()];
}

const read = (dir: string, file: string) => readFileSync(path.join(dir, file), "utf8");

/** The app's setup only re-exports the block's; the client is the version of setup/database.ts `add` chose, recorded in the lock. */
function expectWiring(dir: string, wiring: Wiring) {
  expect(read(dir, "src/idempotency-setup.ts")).toMatch(
    /^export \* from "\.\/blocks\/idempotency\/setup\/index(\.js)?";$/m,
  );
  const lock = JSON.parse(read(dir, "blocks.lock.json")) as {
    blocks: { idempotency: { variants: Record<string, string>; files: Record<string, string> } };
  };
  expect(lock.blocks.idempotency.variants["idempotency/setup/database.ts"]).toBe(`idempotency/setup/${wiring.variant}`);
  expect(lock.blocks.idempotency.files).toHaveProperty([`${SETUP}/database.ts`]);
  const database = read(dir, `${SETUP}/database.ts`);
  for (const line of wiring.expected) expect(database).toContain(line);
}

describe.each(MODULE_SYSTEMS)("the wiring module in a $name project", ({ fixture }) => {
  it.each(WIRINGS)(
    "$name: add writes the store on that client, and the project type-checks (strict)",
    async (wiring) => {
      const dir = await sampleProject(fixture, wiring.packages);
      const result = await runAdd({
        blocks: ["idempotency"],
        cwd: dir,
        yes: true,
        install: false,
        ...(wiring.store ? { store: wiring.store } : {}),
      });
      expectWiring(dir, wiring);
      const files = wiringFiles(dir);
      expect(files).toContain(`${SETUP}/database.test.ts`);
      // Next.js's lint (react-hooks/rules-of-hooks) fails on any call of a function named like a hook (the wiring had `useDatabase`),
      // called bare or on a PascalCase namespace (`React.useState`); a method of a lower-case object (`vi.useFakeTimers()`) is no hook to it.
      for (const file of files)
        expect(read(dir, file), file).not.toMatch(/(?<![\w.])use[A-Z]\w*\s*\(|\b[A-Z]\w*\.use[A-Z]\w*\s*\(/);
      if (wiring.name === "Prisma") expect(result.dependencies.dependencies).toContain("@prisma/adapter-pg@^7.10.0");
      if (wiring.app) {
        const setupImport = fixture === "express-nodenext" ? "./idempotency-setup.js" : "./idempotency-setup";
        writeFileSync(
          path.join(dir, "src/app-client.ts"),
          [`import { createIdempotency } from "${setupImport}";`, ...wiring.app, ""].join("\n"),
        );
        files.push("src/app-client.ts");
      }
      expect(typeCheck(dir, files)).toEqual([]);
    },
    120_000,
  );
});

const DATABASE_URL = process.env.DATABASE_URL;
const REDIS_URL = process.env.REDIS_URL;
const MYSQL_URL = process.env.MYSQL_URL;

/** The vendored test of the wiring, run by vitest inside the project. */
async function wiringTest(dir: string, env: Record<string, string | undefined>) {
  const vitest = path.join(dir, "node_modules/vitest/vitest.mjs");
  const run = await execa("node", [vitest, "run", `${SETUP}/database.test.ts`, "--testTimeout=60000"], {
    cwd: dir,
    reject: false,
    env: {
      DATABASE_URL: undefined,
      REDIS_URL: undefined,
      MYSQL_URL: undefined,
      AWS_ENDPOINT_URL_DYNAMODB: undefined,
      NO_COLOR: "1",
      ...env,
    },
    extendEnv: true,
  });
  return { exitCode: run.exitCode, output: `${run.stdout}\n${run.stderr}` };
}

describe("the wiring's own test, run in the project against the real store", () => {
  const tables: string[] = [];
  const mysqlTables: string[] = [];
  afterAll(async () => {
    if (!MYSQL_URL || mysqlTables.length === 0) return;
    const pool = createPool(MYSQL_URL);
    for (const table of mysqlTables) for (const statement of mySqlDropStatements(table)) await pool.query(statement);
    await pool.end();
  });
  afterAll(async () => {
    if (!DATABASE_URL || tables.length === 0) return;
    const pool = new pg.Pool({ connectionString: DATABASE_URL });
    for (const table of tables) await pool.query(`DROP TABLE IF EXISTS ${table}, ${table}_retries`);
    await pool.end();
  });

  const RUNTIME: Array<Wiring & { edit?: (setup: string) => string; setupFixture?: (dir: string) => void }> = [
    WIRINGS[1] as Wiring,
    WIRINGS[2] as Wiring,
    WIRINGS[3] as Wiring,
    WIRINGS[4] as Wiring,
    {
      ...(WIRINGS[5] as Wiring),
      // What the wiring's comment tells a Prisma user to change, with a client `prisma generate` wrote.
      edit: (setup) =>
        setup
          .replace(
            /export type Prisma = .*;\nconst createPrisma[^]*?\n};\n/,
            "export type Prisma = PrismaClient;\nconst createPrisma = (adapter: PrismaPg): Prisma => new PrismaClient({ adapter });\n",
          )
          .replace(
            'import { PrismaPg } from "@prisma/adapter-pg";',
            'import { PrismaPg } from "@prisma/adapter-pg";\nimport { PrismaClient } from "../../../generated/prisma/client";',
          ),
      setupFixture: (dir) => linkGeneratedPrisma(dir),
    },
  ];

  it.runIf(DATABASE_URL).each(RUNTIME)(
    "[DATABASE_URL] $name: the wiring runs once per key, in a transaction too, maintains and closes",
    async (wiring) => {
      const dir = await sampleProject("hono-bundler", wiring.packages);
      const table = `wiring_${randomUUID().slice(0, 8)}`;
      tables.push(table);
      await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false, table });
      expectWiring(dir, wiring);
      expect(read(dir, `${SETUP}/table.ts`)).toContain(`= "${table}";`);
      if (wiring.edit) {
        wiring.setupFixture?.(dir);
        const file = path.join(dir, SETUP, "database.ts");
        const edited = wiring.edit(readFileSync(file, "utf8"));
        expect(edited).toContain("new PrismaClient({ adapter })");
        writeFileSync(file, edited);
        expect(typeCheck(dir, wiringFiles(dir))).toEqual([]);
      }
      const run = await wiringTest(dir, { DATABASE_URL });
      expect(run.exitCode, run.output.slice(-3000)).toBe(0);
      expect(run.output).toMatch(/Tests\s+1 passed/);
    },
    120_000,
  );

  it.runIf(REDIS_URL).each([
    { client: "ioredis", packages: [] },
    { client: "node-redis", packages: ["redis"] },
  ])(
    "[REDIS_URL] RedisStore on $client: the wiring runs once per key, recovers and closes",
    async ({ client, packages }) => {
      const dir = await sampleProject("hono-bundler", packages);
      await runAdd({
        blocks: ["idempotency"],
        cwd: dir,
        yes: true,
        install: false,
        store: "redis",
        table: `wiring_${randomUUID().slice(0, 8)}`,
      });
      expect(read(dir, `${SETUP}/database.ts`)).toContain(
        client === "node-redis" ? 'from "redis";' : 'from "ioredis";',
      );
      const run = await wiringTest(dir, { REDIS_URL });
      expect(run.exitCode, run.output.slice(-3000)).toBe(0);
      expect(run.output).toMatch(/Tests\s+1 passed/);
    },
    120_000,
  );

  it("DynamoDbStore (dynalite): the wiring runs once per key, recovers and closes", async () => {
    const local = await startLocalDynamoDb();
    try {
      const dir = await sampleProject("hono-bundler", []);
      await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false, store: "dynamodb" });
      const credentials = { AWS_REGION: "local", AWS_ACCESS_KEY_ID: "local", AWS_SECRET_ACCESS_KEY: "local" };
      const run = await wiringTest(dir, {
        AWS_ENDPOINT_URL_DYNAMODB: local.endpoint,
        IDEMPOTENCY_TABLE: `wiring_${randomUUID().slice(0, 8)}`,
        ...credentials,
      });
      expect(run.exitCode, run.output.slice(-3000)).toBe(0);
      expect(run.output).toMatch(/Tests\s+1 passed/);
    } finally {
      await local.close();
    }
  }, 120_000);

  /** Adds the store with its own table, runs the wiring's test in the project, and expects it to pass (not skip). */
  async function runSqlWiring(wiring: Wiring) {
    const dir = await sampleProject("hono-bundler", wiring.packages);
    const table = `wiring_${randomUUID().slice(0, 8)}`;
    if (onMySql(wiring)) mysqlTables.push(table);
    await runAdd({
      blocks: ["idempotency"],
      cwd: dir,
      yes: true,
      install: false,
      ...(wiring.store ? { store: wiring.store } : {}),
      table,
    });
    expectWiring(dir, wiring);
    expect(read(dir, `${SETUP}/table.ts`)).toContain(`export const IDEMPOTENCY_TABLE: string = "${table}";`);
    const run = await wiringTest(dir, { MYSQL_URL });
    expect(run.exitCode, run.output.slice(-3000)).toBe(0);
    expect(run.output).toMatch(/Tests\s+1 passed/);
  }

  it.runIf(MYSQL_URL).each(SQL_WIRINGS.filter(onMySql))(
    "[MYSQL_URL] $name: the wiring runs once per key, in a transaction too, recovers and closes",
    async (wiring) => {
      await runSqlWiring(wiring);
    },
    120_000,
  );

  // SQLite needs no server: the wiring's test runs on a file in a temporary folder.
  it.each(SQL_WIRINGS.filter((wiring) => wiring.store === "sqlite"))(
    "$name: the wiring runs once per key, in a transaction too, recovers and closes",
    async (wiring) => {
      await runSqlWiring(wiring);
    },
    120_000,
  );

  it("without the variable its server needs, the wiring's test says so and is skipped, not passed", async () => {
    const dir = await sampleProject("hono-bundler", ["postgres"]);
    await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false });
    const run = await wiringTest(dir, {});
    expect(run.exitCode, run.output.slice(-3000)).toBe(0);
    expect(run.output).toMatch(/Tests\s+1 skipped/);
  }, 120_000);

  it("pg (the default): the wiring's test runs on an embedded PostgreSQL (PGlite), with no server, and passes", async () => {
    const dir = await sampleProject("hono-bundler", ["pg"]);
    await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false });
    expectWiring(dir, WIRINGS[0] as Wiring);
    const run = await wiringTest(dir, {});
    expect(run.exitCode, run.output.slice(-3000)).toBe(0);
    expect(run.output).toMatch(/Tests\s+1 passed/);
  }, 120_000);
});

describe("the wiring on SIGTERM", () => {
  /**
   * An app on the wiring, which opens its own pg Pool (on a URL never connected: nothing here needs a server)
   * and so closes it; Pool.prototype.end is watched to see when. The app sends itself SIGTERM.
   */
  const APP = `import { Pool } from "pg";
import { createIdempotency } from "./idempotency-setup";

const pool = { ended: false };
const end = Pool.prototype.end;
Pool.prototype.end = function (this: Pool, ...args: never[]) {
  pool.ended = true;
  return end.apply(this, args);
} as typeof end;
process.env.DATABASE_URL = "postgres://127.0.0.1:1/none";
const idempotency = createIdempotency();
const alive = setInterval(() => {}, 1_000);
// The app's own handler: its in-flight requests finish (50 ms here) on the open pool, then it closes the wiring.
const drain = () =>
  process.once("SIGTERM", () => {
    setTimeout(() => {
      console.log(\`pool ended during the drain: \${String(pool.ended)}\`);
      clearInterval(alive);
      void idempotency.close().then(() => console.log(\`pool ended after close(): \${String(pool.ended)}\`));
    }, 50);
  });
// Registered before or after the wiring's own listener: the order must not matter.
if (process.argv[2] === "drain-first") drain();
idempotency.startMaintenance();
if (process.argv[2] === "drain") drain();
process.kill(process.pid, "SIGTERM");
`;

  async function run(mode: "drain" | "drain-first" | "alone") {
    const dir = await sampleProject("hono-bundler", ["pg"]);
    await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false });
    writeFileSync(path.join(dir, "src/app.ts"), APP);
    return execa("node", ["--import", "tsx", "src/app.ts", mode], { cwd: dir, reject: false, timeout: 20_000 });
  }

  it.each(["drain", "drain-first"] as const)(
    "an app that handles SIGTERM (%s) keeps its pool until it calls close(): requests being drained still reach the database",
    async (mode) => {
      const result = await run(mode);
      expect(result.stdout, result.stderr).toBe("pool ended during the drain: false\npool ended after close(): true");
      expect(result.exitCode).toBe(0);
    },
    60_000,
  );

  it("an app without a handler of its own: the wiring closes the clients and the process dies of SIGTERM, as Node's default", async () => {
    const result = await run("alone");
    expect(result.signal, result.stderr).toBe("SIGTERM");
  }, 60_000);
});

/** The committed model-less client `prisma generate` wrote (test/idempotency/clients/prisma), where the edit imports it from. */
function linkGeneratedPrisma(dir: string) {
  const generated = path.resolve(import.meta.dirname, "../idempotency/clients/prisma/generated");
  cpSync(generated, path.join(dir, "src/generated/prisma"), { recursive: true });
}
