// Each database client behind its adapter (stores/clients/), on DATABASE_URL and, where the client runs on it, PGlite.
import type { SqlClient, TransactionalSqlClient } from "@/blocks/idempotency/stores/postgres-store";
import { freshPostgresStore, type StoreKind } from "./store-harness";

/** One client, opened once per test file. */
export type OpenedClient<Tx> = {
  /** The adapter, as a user builds it for PostgresStore. */
  client: TransactionalSqlClient<Tx>;
  /** A business write in the client's own idiom, on its own transaction object: one row in `table`. */
  write(tx: Tx, table: string, key: string): Promise<unknown>;
  /** SQL text with no parameters through the client's raw-SQL call on its transaction object. */
  raw(tx: Tx, text: string): Promise<unknown>;
  /** Members (dotted paths) of the client's own transaction object that end or leave the transaction (refused on the guarded one). */
  escapes: string[];
  close(): Promise<void>;
};

export type ClientKind = {
  /** e.g. "postgres.js (DATABASE_URL)" */
  name: string;
  /** The client and how the reliability worker / SIGKILL child names it. */
  client: ClientName;
  database: "postgres" | "pglite";
  /** One connection (PGlite, a pg Client): a duplicate queues behind the whole first transaction instead of its row lock. */
  oneConnection: boolean;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each kind has its own transaction type.
  open(): Promise<OpenedClient<any>>;
};

export type ClientName =
  | "pg-pool"
  | "pg-client"
  | "pglite"
  | "postgres-js"
  | "drizzle-pg"
  | "drizzle-postgres-js"
  | "drizzle-pglite"
  | "prisma"
  | "prisma-pool"
  | "kysely"
  | "typeorm"
  | "knex";

/** Opens one client on DATABASE_URL (`url`) or an in-memory PGlite. */
export async function openClient(
  name: ClientName,
  url = process.env.DATABASE_URL ?? "",
): Promise<OpenedClient<unknown>> {
  switch (name) {
    case "pg-pool": {
      const { default: pg } = await import("pg");
      const { pgClient } = await import("@/blocks/idempotency/stores/clients/pg");
      const pool = new pg.Pool({ connectionString: url, max: 10 });
      pool.on("error", () => {});
      return opened(
        pgClient(pool),
        (tx, table, key) => tx.query(`INSERT INTO ${table} (key) VALUES ($1)`, [key]),
        () => pool.end(),
        {
          raw: (tx, text) => tx.query(text),
          escapes: ["release", "end"],
        },
      );
    }
    case "pg-client": {
      const { default: pg } = await import("pg");
      const { pgClient } = await import("@/blocks/idempotency/stores/clients/pg");
      const connection = new pg.Client({ connectionString: url });
      connection.on("error", () => {});
      await connection.connect();
      return opened(
        pgClient(connection),
        (tx, table, key) => tx.query(`INSERT INTO ${table} (key) VALUES ($1)`, [key]),
        () => connection.end(),
        {
          raw: (tx, text) => tx.query(text),
          escapes: ["release", "end"],
        },
      );
    }
    case "pglite": {
      const db = await openPglite();
      const { pgliteClient } = await import("@/blocks/idempotency/testing/pglite");
      return opened(
        pgliteClient(db),
        (tx, table, key) => tx.query(`INSERT INTO ${table} (key) VALUES ($1)`, [key]),
        () => db.close(),
        {
          raw: (tx, text) => tx.exec(text),
          escapes: ["rollback"],
        },
      );
    }
    case "postgres-js": {
      const { default: postgres } = await import("postgres");
      const { postgresJsClient } = await import("@/blocks/idempotency/stores/clients/postgres-js");
      const sql = postgres(url, { max: 10, onnotice: () => {} });
      return opened(
        postgresJsClient(sql),
        (tx, table, key) => tx`INSERT INTO ${tx(table)} (key) VALUES (${key})`,
        () => sql.end({ timeout: 1 }),
        {
          raw: (tx, text) => tx.unsafe(text),
          escapes: ["rollback", "prepare", "file"],
        },
      );
    }
    case "drizzle-pg": {
      const { default: pg } = await import("pg");
      const { drizzle } = await import("drizzle-orm/node-postgres");
      const { drizzleClient } = await import("@/blocks/idempotency/stores/clients/drizzle");
      const pool = new pg.Pool({ connectionString: url, max: 10 });
      pool.on("error", () => {});
      const writes = await drizzleWrites();
      return opened(
        drizzleClient(drizzle(pool)),
        (tx, table, key) => tx.insert(writes(table)).values({ key }),
        () => pool.end(),
        drizzleRaw,
      );
    }
    case "drizzle-postgres-js": {
      const { default: postgres } = await import("postgres");
      const { drizzle } = await import("drizzle-orm/postgres-js");
      const { drizzleClient } = await import("@/blocks/idempotency/stores/clients/drizzle");
      const sql = postgres(url, { max: 10, onnotice: () => {} });
      const writes = await drizzleWrites();
      return opened(
        drizzleClient(drizzle(sql)),
        (tx, table, key) => tx.insert(writes(table)).values({ key }),
        () => sql.end({ timeout: 1 }),
        drizzleRaw,
      );
    }
    case "drizzle-pglite": {
      const db = await openPglite();
      const { drizzle } = await import("drizzle-orm/pglite");
      const { drizzleClient } = await import("@/blocks/idempotency/stores/clients/drizzle");
      const writes = await drizzleWrites();
      return opened(
        drizzleClient(drizzle(db)),
        (tx, table, key) => tx.insert(writes(table)).values({ key }),
        () => db.close(),
        drizzleRaw,
      );
    }
    case "prisma":
    case "prisma-pool": {
      const { default: pg } = await import("pg");
      const { PrismaClient } = await import("../clients/prisma/generated/client");
      const { PrismaPg } = await import("@prisma/adapter-pg");
      const { prismaClient } = await import("@/blocks/idempotency/stores/clients/prisma");
      // "prisma-pool": the store's own statements go to the pg Pool under PrismaPg (the `pool` option).
      const pool = name === "prisma-pool" ? new pg.Pool({ connectionString: url, max: 10 }) : undefined;
      pool?.on("error", () => {});
      const prisma = new PrismaClient({ adapter: new PrismaPg(pool ?? { connectionString: url, max: 10 }) });
      return opened(
        prismaClient(prisma, { pool, maxWait: 10_000, timeout: 30_000 }),
        (tx, table, key) => tx.$executeRawUnsafe(`INSERT INTO ${table} (key) VALUES ($1)`, key),
        async () => {
          await prisma.$disconnect();
          await pool?.end();
        },
        { raw: (tx, text) => tx.$executeRawUnsafe(text), escapes: [] },
      );
    }
    case "kysely": {
      const { default: pg } = await import("pg");
      const { Kysely, PostgresDialect } = await import("kysely");
      const { kyselyClient } = await import("@/blocks/idempotency/stores/clients/kysely");
      const pool = new pg.Pool({ connectionString: url, max: 10 });
      pool.on("error", () => {});
      const db = new Kysely<Record<string, { key: string }>>({ dialect: new PostgresDialect({ pool }) });
      const { sql } = await import("kysely");
      return opened(
        kyselyClient(db),
        (trx, table, key) => trx.insertInto(table).values({ key }).execute(),
        () => db.destroy(),
        {
          raw: (trx, text) => sql.raw(text).execute(trx),
          escapes: ["startTransaction"],
        },
      );
    }
    case "typeorm": {
      const { DataSource } = await import("typeorm");
      const { typeormClient } = await import("@/blocks/idempotency/stores/clients/typeorm");
      const dataSource = await new DataSource({ type: "postgres", url, poolSize: 10 }).initialize();
      return opened(
        typeormClient(dataSource),
        (manager, table, key) => manager.query(`INSERT INTO ${table} (key) VALUES ($1)`, [key]),
        () => dataSource.destroy(),
        {
          raw: (manager, text) => manager.query(text),
          escapes: [
            "queryRunner.startTransaction",
            "queryRunner.commitTransaction",
            "queryRunner.rollbackTransaction",
            "queryRunner.release",
          ],
        },
      );
    }
    case "knex": {
      const { default: knex } = await import("knex");
      const { knexClient } = await import("@/blocks/idempotency/stores/clients/knex");
      const db = knex({ client: "pg", connection: url, pool: { min: 0, max: 10 } });
      return opened(
        knexClient(db),
        (trx, table, key) => trx(table).insert({ key }),
        () => db.destroy(),
        {
          raw: (trx, text) => trx.raw(text),
          escapes: ["commit", "rollback", "destroy"],
        },
      );
    }
  }
}

/** Keeps each kind's transaction type between its adapter and its write. */
function opened<Tx>(
  client: TransactionalSqlClient<Tx>,
  write: (tx: Tx, table: string, key: string) => Promise<unknown>,
  close: () => Promise<unknown>,
  guard: { raw: (tx: Tx, text: string) => Promise<unknown>; escapes: string[] },
): OpenedClient<unknown> {
  return { client, write, ...guard, close: async () => void (await close()) } as OpenedClient<unknown>;
}

/** Drizzle's raw SQL: `execute` with text (sql.raw); its transaction-ending members are throws (`rollback`) or refused. */
const drizzleRaw = {
  raw: (tx: { execute(text: string): Promise<unknown> }, text: string) => tx.execute(text),
  escapes: ["setTransaction"],
};

async function openPglite() {
  const { PGlite } = await import("@electric-sql/pglite");
  const db = new PGlite();
  await db.waitReady;
  return db;
}

/** Drizzle writes through a table object; one per test table, built at run time. */
async function drizzleWrites() {
  const { pgTable, serial, text } = await import("drizzle-orm/pg-core");
  return (table: string) => pgTable(table, { id: serial("id").primaryKey(), key: text("key").notNull() });
}

const ON_POSTGRES: Array<[ClientName, string]> = [
  ["pg-pool", "pg Pool"],
  ["pg-client", "pg Client"],
  ["postgres-js", "postgres.js"],
  ["drizzle-pg", "Drizzle over node-postgres"],
  ["drizzle-postgres-js", "Drizzle over postgres.js"],
  ["prisma", "Prisma with @prisma/adapter-pg"],
  ["prisma-pool", "Prisma with @prisma/adapter-pg, store statements on its pg Pool"],
  ["kysely", "Kysely (PostgresDialect)"],
  ["typeorm", "TypeORM (DataSource, postgres driver)"],
  ["knex", "Knex (pg client)"],
];
const ON_PGLITE: Array<[ClientName, string]> = [
  ["pglite", "PGlite"],
  ["drizzle-pglite", "Drizzle over PGlite"],
];

/** Every client adapter on every database it supports here: PGlite always, PostgreSQL when DATABASE_URL is set. */
export const clientKinds: ClientKind[] = [
  ...ON_PGLITE.map(([client, label]) => ({
    name: `${label} (PGlite)`,
    client,
    database: "pglite" as const,
    oneConnection: true,
    open: () => openClient(client),
  })),
  ...(process.env.DATABASE_URL ? ON_POSTGRES : []).map(([client, label]) => ({
    name: `${label} (DATABASE_URL)`,
    client,
    database: "postgres" as const,
    oneConnection: client === "pg-client",
    open: () => openClient(client),
  })),
];

/** The store contract over a client adapter: PostgresStore on the adapter's `query`. */
export function clientStoreKind(kind: ClientKind): StoreKind {
  return {
    name: `PostgresStore via ${kind.name}`,
    async open() {
      const { client, close } = await kind.open();
      return { fresh: () => freshPostgresStore(client as SqlClient), close };
    },
  };
}
