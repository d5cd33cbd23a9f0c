// The database-client piece of the generated wiring: one entry per client the store can run on.

export type DatabaseClient = "pg";

/**
 * `imports` and `connect` (a `connectDatabase(url)` returning the setup's `Database`) for each client.
 * Another client (postgres.js, Drizzle, Prisma, Kysely, PGlite) is one more entry here.
 */
export const DATABASE_CLIENTS: Record<DatabaseClient, { imports: string[]; connect: string[] }> = {
  pg: {
    imports: ['import { Pool } from "pg";'],
    connect: [
      "/** The database client the store and the maintenance lock run on; to use another client, change only this function. */",
      "export function connectDatabase(url = process.env.DATABASE_URL): Database {",
      "  return new Pool({ connectionString: url });",
      "}",
    ],
  },
};
