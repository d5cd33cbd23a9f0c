// What recovery points add to a first request on PostgreSQL: the create function's steps lookup, timed.
// Usage: DATABASE_URL=postgres://... npx tsx bench/steps-create-cost.ts [creates per round] [rounds] [--in-database-only]
// Two tables on one connection; in one, the create function is replaced by the same body without the
// lookup of earlier attempts' steps (what it was before steps). Rounds alternate, so drift hits both.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { createFunctionName, postgresSchemaStatements } from "../registry/idempotency/stores/postgres-schema";
import { PostgresStore } from "../registry/idempotency/stores/postgres-store";

const url = process.env.DATABASE_URL;
if (!url) throw new Error("Set DATABASE_URL.");
const creates = Number(process.argv[2] ?? 2_000);
const rounds = Number(process.argv[3] ?? 3);
const inDatabaseOnly = process.argv.includes("--in-database-only");
const pool = new pg.Pool({ connectionString: url, max: 1 });
const tables = { withSteps: `bench_steps_new_${process.pid}`, without: `bench_steps_old_${process.pid}` };

async function setUp(): Promise<void> {
  for (const table of Object.values(tables)) {
    for (const statement of postgresSchemaStatements(table)) await pool.query(statement);
  }
  const claim = postgresSchemaStatements(tables.without).find((statement) =>
    statement.includes(`FUNCTION ${createFunctionName(tables.without)}(`),
  );
  const withoutLookup = claim?.replace(/-- What earlier attempts[\s\S]*?expires_at > now\(\);\n/, "");
  if (!withoutLookup || withoutLookup === claim)
    throw new Error("The create function's steps lookup was not found; update this script.");
  await pool.query(withoutLookup);
}

/** The function alone, `creates` calls in one statement: no round trip or client in the figure. */
async function timeInDatabase(table: string): Promise<number> {
  const started = performance.now();
  await pool.query(
    `SELECT count(*) FROM generate_series(1, $1) i,
     LATERAL ${createFunctionName(table)}('bench', 'u', gen_random_uuid()::text, 'h', gen_random_uuid(), 60000, NULL)`,
    [creates],
  );
  return ((performance.now() - started) * 1000) / creates;
}

async function time(table: string): Promise<number> {
  const store = new PostgresStore(pool, { table });
  const started = performance.now();
  for (let i = 0; i < creates; i++) {
    await store.create({
      scope: { operation: "bench", userId: "u", key: randomUUID() },
      requestHash: "h",
      ttlMs: 60_000,
      token: randomUUID(),
    });
  }
  return ((performance.now() - started) * 1000) / creates;
}

try {
  await setUp();
  if (!inDatabaseOnly) {
    await time(tables.withSteps);
    await time(tables.without);
  }
  const results: Record<string, number[]> = {
    withSteps: [],
    without: [],
    "withSteps, in database": [],
    "without, in database": [],
  };
  for (let round = 0; round < rounds; round++) {
    if (!inDatabaseOnly) {
      results.without?.push(await time(tables.without));
      results.withSteps?.push(await time(tables.withSteps));
    }
    results["without, in database"]?.push(await timeInDatabase(tables.without));
    results["withSteps, in database"]?.push(await timeInDatabase(tables.withSteps));
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
  for (const [name, values] of Object.entries(results).filter(([, values]) => values.length > 0)) {
    console.log(
      `${name.padEnd(24)} µs per create: ${values.map((value) => value.toFixed(1)).join(", ")} (median ${median(values).toFixed(1)})`,
    );
  }
} finally {
  for (const table of Object.values(tables)) {
    await pool.query(`DROP TABLE IF EXISTS ${table}, ${table}_retries`);
    await pool.query(`DROP FUNCTION IF EXISTS ${table}_claim, ${table}_complete`);
  }
  await pool.end();
}
