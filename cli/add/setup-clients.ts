// The database-client piece of the generated wiring: how PostgresStore and the maintenance lock run on each client.

export type DatabaseClient = "pg" | "postgres-js" | "drizzle-node-postgres" | "drizzle-postgres-js" | "kysely" | "prisma" | "typeorm" | "knex";

/**
 * What each client adds to the wiring module: `imports`, and `declarations` that define
 * `Database` (the client the app passes in), `Transaction` (what `executeInTransaction` hands the
 * operation), `connectDatabase(url)` and `bindDatabase(db)`: the store's SQL, the maintenance lock
 * and the close, over that client. `packages`: what those imports need installed besides the
 * package `add` detected the client by (Kysely, Prisma and Drizzle's node-postgres driver open a
 * pg Pool); `add` installs the ones the project lacks, with the block's ranges for them.
 */
export type ClientWiring = { imports: string[]; declarations: string[]; packages: string[] };

/** node-postgres and its types: what a wiring that opens a pg Pool imports. */
const PG = ["pg", "@types/pg"];

/**
 * The client the wiring is written for: the chosen `client-*` feature (Drizzle over the driver the
 * project declares), else `pg`, the block's own dependency.
 *
 * @example
 * wiringClient(new Set(["client-drizzle", "client-postgres-js"]), new Set(["drizzle-orm", "postgres"])); // "drizzle-postgres-js"
 */
export function wiringClient(features: Set<string>, declared: Set<string>): DatabaseClient {
  if (features.has("client-drizzle")) return declared.has("postgres") && !declared.has("pg") ? "drizzle-postgres-js" : "drizzle-node-postgres";
  if (features.has("client-prisma")) return "prisma";
  if (features.has("client-typeorm")) return "typeorm";
  if (features.has("client-kysely")) return "kysely";
  if (features.has("client-knex")) return "knex";
  if (features.has("client-postgres-js")) return "postgres-js";
  return "pg";
}

const CONNECT_COMMENT = "/** The database client the store and the maintenance lock run on; to use another client, change `Database`, this function and `bindDatabase`. */";

/** postgres.js has no `connect()`: the session advisory lock must be taken and released on one reserved connection. */
const RESERVED_LOCK = [
  "",
  "/** The maintenance lock: a session advisory lock is taken and released on one connection, so it reserves one. */",
  "function reservedLock(sql: Sql): LockClient {",
  "  const on = (client: Pick<Sql, \"unsafe\">): SqlClient => ({ query: async (text, params = []) => ({ rows: await client.unsafe(text, params as never[]) }) });",
  "  return {",
  "    ...on(sql),",
  "    async connect() {",
  "      const reserved = await sql.reserve();",
  "      return { ...on(reserved), release: () => reserved.release() };",
  "    },",
  "  };",
  "}",
];

const POSTGRES_JS_CONNECT = "url === undefined ? postgres() : postgres(url)";

export const DATABASE_CLIENTS: Record<DatabaseClient, ClientWiring> = {
  pg: {
    packages: PG,
    imports: ['import { Pool } from "pg";', 'import { pgClient, type PgTransaction } from "@/blocks/idempotency/stores/clients/pg";'],
    declarations: [
      "/** Your database client: a pg Pool, or anything with `query` and `end` (the test passes PGlite). */",
      "export type Database = LockClient & { end(): Promise<void> };",
      "/** What `handler.executeInTransaction` hands the operation: the pool connection's `query`, inside BEGIN ... COMMIT (no `release`). */",
      "export type Transaction = PgTransaction;",
      "",
      CONNECT_COMMENT,
      "export function connectDatabase(url = process.env.DATABASE_URL): Database {",
      "  return new Pool({ connectionString: url });",
      "}",
      "",
      "/** On a Pool the store also runs transactions (`executeInTransaction`); on another client, `execute` only. */",
      "export function bindDatabase(db: Database): DatabaseUse {",
      "  return { sql: db instanceof Pool ? pgClient(db) : db, lock: db, end: () => db.end() };",
      "}",
    ],
  },
  "postgres-js": {
    packages: [],
    imports: ['import postgres, { type Sql, type TransactionSql } from "postgres";', 'import { postgresJsClient } from "@/blocks/idempotency/stores/clients/postgres-js";'],
    declarations: [
      "/** Your postgres.js client: pass the app's own (`createIdempotency({ db: sql })`) to share its connections. */",
      "export type Database = Sql;",
      "/** What `handler.executeInTransaction` hands the operation: the `sql` of `sql.begin`. */",
      "export type Transaction = TransactionSql;",
      "",
      CONNECT_COMMENT,
      "export function connectDatabase(url = process.env.DATABASE_URL): Database {",
      `  return ${POSTGRES_JS_CONNECT};`,
      "}",
      "",
      "export function bindDatabase(db: Database): DatabaseUse {",
      "  return { sql: postgresJsClient(db), lock: reservedLock(db), end: () => db.end() };",
      "}",
      ...RESERVED_LOCK,
    ],
  },
  "drizzle-node-postgres": {
    packages: PG,
    imports: [
      'import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";',
      'import { Pool } from "pg";',
      'import { drizzleClient, type DrizzleTransaction } from "@/blocks/idempotency/stores/clients/drizzle";',
    ],
    declarations: [
      "/** Your Drizzle database on a pg Pool, any schema (`drizzle({ client: pool, schema })`); put `typeof schema` here for a typed `tx`. */",
      "export type Database = NodePgDatabase<Record<string, unknown>> & { $client: Pool };",
      "/** What `handler.executeInTransaction` hands the operation: the `tx` of `db.transaction`. */",
      "export type Transaction = DrizzleTransaction<Database>;",
      "",
      CONNECT_COMMENT,
      "export function connectDatabase(url = process.env.DATABASE_URL): Database {",
      "  return drizzle({ client: new Pool({ connectionString: url }) });",
      "}",
      "",
      "/** The maintenance lock runs on Drizzle's own Pool, which lends one connection for the lock and its release. */",
      "export function bindDatabase(db: Database): DatabaseUse {",
      "  return { sql: drizzleClient(db), lock: db.$client, end: () => db.$client.end() };",
      "}",
    ],
  },
  "drizzle-postgres-js": {
    packages: [],
    imports: [
      'import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";',
      'import postgres, { type Sql } from "postgres";',
      'import { drizzleClient, type DrizzleTransaction } from "@/blocks/idempotency/stores/clients/drizzle";',
    ],
    declarations: [
      "/** Your Drizzle database on postgres.js, any schema (`drizzle({ client: sql, schema })`); put `typeof schema` here for a typed `tx`. */",
      "export type Database = PostgresJsDatabase<Record<string, unknown>> & { $client: Sql };",
      "/** What `handler.executeInTransaction` hands the operation: the `tx` of `db.transaction`. */",
      "export type Transaction = DrizzleTransaction<Database>;",
      "",
      CONNECT_COMMENT,
      "export function connectDatabase(url = process.env.DATABASE_URL): Database {",
      `  return drizzle({ client: ${POSTGRES_JS_CONNECT} });`,
      "}",
      "",
      "export function bindDatabase(db: Database): DatabaseUse {",
      "  return { sql: drizzleClient(db), lock: reservedLock(db.$client), end: () => db.$client.end() };",
      "}",
      ...RESERVED_LOCK,
    ],
  },
  kysely: {
    packages: PG,
    imports: [
      'import { Kysely, PostgresDialect, type Transaction as KyselyTransaction } from "kysely";',
      'import { Pool } from "pg";',
      'import { kyselyClient } from "@/blocks/idempotency/stores/clients/kysely";',
    ],
    declarations: [
      "/** Kysely's `DB` type: `any` takes the app's instance whatever its tables; put your own `DB` here for typed queries on `trx`. */",
      "// eslint-disable-next-line @typescript-eslint/no-explicit-any -- until your DB type replaces it: Kysely<DB> is assignable to nothing narrower",
      "export type Tables = any;",
      "/** Your Kysely instance (PostgreSQL dialect): pass the app's own (`createIdempotency({ db })`) to share its pool. */",
      "export type Database = Kysely<Tables>;",
      "/** What `handler.executeInTransaction` hands the operation: the `trx` of `db.transaction().execute`. */",
      "export type Transaction = KyselyTransaction<Tables>;",
      "",
      CONNECT_COMMENT,
      "export function connectDatabase(url = process.env.DATABASE_URL): Database {",
      "  return new Kysely<Tables>({ dialect: new PostgresDialect({ pool: new Pool({ connectionString: url }) }) });",
      "}",
      "",
      "export function bindDatabase(db: Database): DatabaseUse {",
      "  return { sql: kyselyClient(db), lock: heldConnectionLock(db), end: () => db.destroy() };",
      "}",
      "",
      "/** The maintenance lock: a session advisory lock is taken and released on one connection, which Kysely lends while `connection().execute` runs. */",
      "function heldConnectionLock(db: Database): LockClient {",
      "  return {",
      "    ...kyselyClient(db),",
      "    connect: () =>",
      "      new Promise((lent, failed) => {",
      "        db.connection()",
      "          .execute((connection) => new Promise<void>((release) => lent({ ...kyselyClient(connection), release })))",
      "          .catch(failed);",
      "      }),",
      "  };",
      "}",
    ],
  },
  typeorm: {
    packages: ["pg"],
    imports: ['import { DataSource, type EntityManager } from "typeorm";', 'import { typeormClient } from "@/blocks/idempotency/stores/clients/typeorm";'],
    declarations: [
      "/** Your TypeORM DataSource (postgres driver): pass the app's own, initialized (`createIdempotency({ db: dataSource })`), to share its pool. */",
      "export type Database = DataSource;",
      "/** What `handler.executeInTransaction` hands the operation: the transaction's EntityManager. */",
      "export type Transaction = EntityManager;",
      "",
      "/** TypeORM connects in `initialize()`: the store's statements on a DataSource opened here wait for it. */",
      "const initializing = new WeakMap<DataSource, Promise<unknown>>();",
      "",
      CONNECT_COMMENT,
      "export function connectDatabase(url = process.env.DATABASE_URL): Database {",
      '  const dataSource = new DataSource({ type: "postgres", ...(url === undefined ? {} : { url }) });',
      "  const ready = dataSource.initialize();",
      "  ready.catch(() => {}); // A failed start surfaces on the first statement (STORE_UNAVAILABLE, logged).",
      "  initializing.set(dataSource, ready);",
      "  return dataSource;",
      "}",
      "",
      "export function bindDatabase(db: Database): DatabaseUse {",
      "  const client = typeormClient(db);",
      "  const ready = async () => void (await initializing.get(db));",
      "  const sql: TransactionalSqlClient<Transaction> = {",
      "    query: async (text, params) => (await ready(), client.query(text, params)),",
      "    transaction: async (work) => (await ready(), client.transaction(work)),",
      "  };",
      "  return { sql, lock: runnerLock(db, sql, ready), end: () => db.destroy() };",
      "}",
      "",
      "/** The maintenance lock: a session advisory lock is taken and released on one connection, which a QueryRunner holds until released. */",
      "function runnerLock(db: Database, sql: SqlClient, ready: () => Promise<void>): LockClient {",
      "  return {",
      "    query: (text, params) => sql.query(text, params),",
      "    async connect() {",
      "      await ready();",
      "      const runner = db.createQueryRunner();",
      "      return { query: async (text, params) => ({ rows: (await runner.query(text, params, true)).records }), release: () => void runner.release() };",
      "    },",
      "  };",
      "}",
    ],
  },
  knex: {
    packages: PG,
    imports: ['import knex, { type Knex } from "knex";', 'import { knexClient } from "@/blocks/idempotency/stores/clients/knex";'],
    declarations: [
      "/** Your Knex instance (pg client): pass the app's own (`createIdempotency({ db })`) to share its pool. */",
      "export type Database = Knex;",
      "/** What `handler.executeInTransaction` hands the operation: the `trx` of `knex.transaction`. */",
      "export type Transaction = Knex.Transaction;",
      "",
      CONNECT_COMMENT,
      "export function connectDatabase(url = process.env.DATABASE_URL): Database {",
      '  return knex({ client: "pg", ...(url === undefined ? {} : { connection: url }) });',
      "}",
      "",
      "export function bindDatabase(db: Database): DatabaseUse {",
      "  return { sql: knexClient(db), lock: connectionLock(db), end: () => db.destroy() };",
      "}",
      "",
      "/** What the lock uses of Knex's client, which Knex types `any`: its pool lends one of its node-postgres connections, and takes it back. */",
      "type KnexPool = { acquireConnection(): Promise<SqlClient>; releaseConnection(connection: SqlClient): Promise<void> };",
      "",
      "/** The maintenance lock: a session advisory lock is taken and released on one connection, which Knex's pool lends. */",
      "function connectionLock(db: Database): LockClient {",
      "  const pool = db.client as KnexPool;",
      "  return {",
      "    query: (text, params) => knexClient(db).query(text, params),",
      "    async connect() {",
      "      const connection = await pool.acquireConnection();",
      "      return { query: (text, params) => connection.query(text, params), release: () => void pool.releaseConnection(connection) };",
      "    },",
      "  };",
      "}",
    ],
  },
  prisma: {
    packages: PG,
    imports: [
      'import { PrismaPg } from "@prisma/adapter-pg";',
      'import { Pool } from "pg";',
      'import { prismaClient, type PrismaTransaction } from "@/blocks/idempotency/stores/clients/prisma";',
    ],
    declarations: [
      "// TO CHANGE: `prisma generate` writes your PrismaClient where your schema's generator says, so `blocks add`",
      "// could not import it. Import it, and replace the two declarations below with (path from your generator's `output`):",
      '//   import { PrismaClient } from "./generated/prisma/client";',
      "//   export type Prisma = PrismaClient;",
      "//   const createPrisma = (adapter: PrismaPg): Prisma => new PrismaClient({ adapter });",
      "/** What the setup uses of your PrismaClient: raw SQL, interactive transactions and `$disconnect`. */",
      "export type Prisma = Parameters<typeof prismaClient>[0] & { $disconnect(): Promise<void> };",
      "const createPrisma = (_adapter: PrismaPg): Prisma => {",
      '  throw new Error("idempotency-setup.ts: createPrisma must build your PrismaClient (see the comment above it).");',
      "};",
      "",
      "/** Your PrismaClient and the pg Pool under its adapter (the maintenance lock borrows one of its connections). */",
      "export type Database = { prisma: Prisma; pool: Pool };",
      "/** What `handler.executeInTransaction` hands the operation: the `tx` of `prisma.$transaction`. */",
      "export type Transaction = PrismaTransaction<Prisma>;",
      "",
      CONNECT_COMMENT,
      "export function connectDatabase(url = process.env.DATABASE_URL): Database {",
      "  const pool = new Pool({ connectionString: url });",
      "  return { prisma: createPrisma(new PrismaPg(pool)), pool };",
      "}",
      "",
      "/** Prisma's interactive transactions time out after 5 s by default: raise `timeout` here for longer operations.",
      " * `pool`: the store's statements outside a transaction skip Prisma's query engine (same pool, less CPU). */",
      "export function bindDatabase(db: Database): DatabaseUse {",
      "  return {",
      "    sql: prismaClient(db.prisma, { pool: db.pool, timeout: 5_000 }),",
      "    lock: db.pool,",
      "    end: async () => {",
      "      await db.prisma.$disconnect();",
      "      await db.pool.end();",
      "    },",
      "  };",
      "}",
    ],
  },
};
