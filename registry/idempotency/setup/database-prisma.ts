// PostgresStore on Prisma (with @prisma/adapter-pg): the store's statements outside a transaction run on the adapter's pool.
import { PrismaPg } from "@prisma/adapter-pg";
import { Pool } from "pg";
import { prismaClient, type PrismaTransaction } from "../stores/clients/prisma";
import { openPostgres, type DatabaseUse } from "./postgres-database";
import type { OpenedDatabase } from "./variants";

// TO CHANGE: `prisma generate` writes your PrismaClient where your schema's generator says, so `blocks add`
// could not import it. Import it, and replace the two declarations below with (the path from this file, in
// <blocks>/idempotency/setup/, to your generator's `output`; here src/generated/prisma, with the blocks in src/blocks):
//   import { PrismaClient } from "../../../generated/prisma/client";
//   export type Prisma = PrismaClient;
//   const createPrisma = (adapter: PrismaPg): Prisma => new PrismaClient({ adapter });
/** What the setup uses of your PrismaClient: raw SQL, interactive transactions and `$disconnect`. */
export type Prisma = Parameters<typeof prismaClient>[0] & { $disconnect(): Promise<void> };
const createPrisma: (adapter: PrismaPg) => Prisma = () => {
  throw new Error(
    "idempotency/setup/database.ts: createPrisma must build your PrismaClient (see the comment above it).",
  );
};

/** Your PrismaClient and the pg Pool under its adapter (the maintenance lock borrows one of its connections). */
export type Database = { prisma: Prisma; pool: Pool };
/** What `handler.executeInTransaction` hands the operation: the `tx` of `prisma.$transaction`. */
export type Transaction = PrismaTransaction<Prisma>;

/** The database client the store and the maintenance lock run on; to use another client, change `Database`, this function and `bindDatabase`. */
export function connectDatabase(url = process.env.DATABASE_URL): Database {
  const pool = new Pool({ connectionString: url });
  return { prisma: createPrisma(new PrismaPg(pool)), pool };
}

/** Prisma's interactive transactions time out after 5 s by default: raise `timeout` here for longer operations.
 * `pool`: the store's statements outside a transaction skip Prisma's query engine (same pool, less CPU). */
export function bindDatabase(db: Database): DatabaseUse<Transaction> {
  return {
    sql: prismaClient(db.prisma, { pool: db.pool, timeout: 5_000 }),
    lock: db.pool,
    end: async () => {
      await db.prisma.$disconnect();
      await db.pool.end();
    },
  };
}

/** The store and its maintenance over `db` (setup/postgres-database.ts). */
export function openDatabase(db: Database): OpenedDatabase<Transaction> {
  return openPostgres(bindDatabase(db));
}
