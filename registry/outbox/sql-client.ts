// The one place that knows the database clients: each one's transaction (or pool) reduced to query(text, params).
//
// Duck-typed, so the outbox imports no driver and `add` copies the same file whatever the project uses.

/** What the outbox runs its statements on. */
export type SqlClient = {
  query(text: string, params: unknown[]): Promise<{ rows: unknown[] }>;
};

// Parameters typed `never`: each driver declares its own (overloaded) parameter types, and a method taking
// anything fits a parameter nothing is known about. Once the client is told apart it is called through the
// matching `Calling<...>` shape, with the values the outbox has.
/** A node-postgres Pool, Client or PoolClient, or a PGlite instance or transaction. */
type QueryClient = { query(text: string, params?: never[]): PromiseLike<unknown> };
/** A postgres.js `sql`, or the `sql` of `sql.begin(async (sql) => ...)`. */
type PostgresJs = { unsafe(text: string, params?: never[], options?: never): PromiseLike<unknown> };
/** A PrismaClient, or the `tx` of `prisma.$transaction(async (tx) => ...)`. */
type Prisma = { $queryRawUnsafe(text: string, ...values: never[]): PromiseLike<unknown> };
/** A Kysely instance, or the `trx` of `db.transaction().execute(async (trx) => ...)`. */
type Kysely = { executeQuery(query: never): PromiseLike<{ rows: unknown[] }> };
/** A Drizzle database, or the `tx` of `db.transaction(async (tx) => ...)`. */
type Drizzle = { execute(query: never): PromiseLike<unknown> };

type CallingQueryClient = { query(text: string, params: unknown[]): PromiseLike<unknown> };
type CallingPostgresJs = {
  unsafe(text: string, params?: unknown[], options?: { prepare?: boolean }): PromiseLike<unknown>;
};
type CallingPrisma = { $queryRawUnsafe(text: string, ...values: unknown[]): PromiseLike<unknown> };
type CallingKysely = { executeQuery(query: ReturnType<typeof kyselyRaw>): PromiseLike<{ rows: unknown[] }> };
type CallingDrizzle = { execute(query: ReturnType<typeof drizzleRaw>): PromiseLike<unknown> };

/** Any client `addToOutbox` and the relay accept: pass the transaction your own code writes with. */
export type OutboxDatabase = QueryClient | PostgresJs | Prisma | Kysely | Drizzle;

/**
 * The client's query(text, params). The checks go from the most specific method to the most common:
 * a Drizzle database also has a `query` property (its relational API, an object, not a function).
 *
 * @example
 * await toSqlClient(tx).query("SELECT 1", []);
 */
export function toSqlClient(db: OutboxDatabase): SqlClient {
  const any = db as Partial<QueryClient & PostgresJs & Prisma & Kysely & Drizzle>;
  if (typeof any.$queryRawUnsafe === "function") {
    const prisma = db as CallingPrisma;
    return { query: async (text, params) => ({ rows: (await prisma.$queryRawUnsafe(text, ...params)) as unknown[] }) };
  }
  if (typeof any.unsafe === "function") {
    const sql = db as CallingPostgresJs;
    // `prepare: true` follows the client's own `prepare` option (off behind PgBouncer), as its tagged templates do.
    return {
      query: async (text, params) => ({ rows: (await sql.unsafe(text, params, { prepare: true })) as unknown[] }),
    };
  }
  if (typeof any.executeQuery === "function") {
    const kysely = db as CallingKysely;
    return { query: async (text, params) => ({ rows: (await kysely.executeQuery(kyselyRaw(text, params))).rows }) };
  }
  if (typeof any.query === "function") {
    const client = db as CallingQueryClient;
    return { query: async (text, params) => (await client.query(text, params)) as { rows: unknown[] } };
  }
  if (typeof any.execute === "function") {
    const drizzle = db as CallingDrizzle;
    return {
      async query(text, params) {
        const result = await drizzle.execute(drizzleRaw(text, params));
        // Over node-postgres and PGlite Drizzle answers a result with `rows`; over postgres.js, the rows.
        return { rows: Array.isArray(result) ? result : (result as { rows: unknown[] }).rows };
      },
    };
  }
  throw new TypeError(
    "The outbox needs a database client: a pg Pool/Client/PoolClient, PGlite, postgres.js sql, Prisma, Kysely or Drizzle (or its transaction).",
  );
}

/** What Kysely's `CompiledQuery.raw` builds, written out so this file imports nothing of Kysely. */
function kyselyRaw(sql: string, parameters: unknown[]) {
  return {
    sql,
    parameters,
    query: { kind: "RawNode", sqlFragments: [sql], parameters: [] },
    queryId: { queryId: "outbox" },
  };
}

/** What Drizzle's `sql` builds, reduced to the one method `execute` calls. */
function drizzleRaw(sql: string, params: unknown[]) {
  const query = { toQuery: () => ({ sql, params }) };
  return { getSQL: () => query };
}
