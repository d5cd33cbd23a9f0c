// A PostgreSQL database of a test's own on DATABASE_URL's server, dropped afterwards: migration tools'
// bookkeeping tables and the blocks' default table names never meet another test's (or another run's).
import { randomUUID } from "node:crypto";
import pg from "pg";

/**
 * Runs `work` against a new database and returns the tables it left in `public`.
 *
 * @example
 * const tables = await withFreshDatabase(process.env.DATABASE_URL!, (url) => migrate(url));
 */
export async function withFreshDatabase(serverUrl: string, work: (databaseUrl: string) => Promise<unknown>): Promise<string[]> {
  const name = `blocks_test_${randomUUID().replace(/-/g, "").slice(0, 12)}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const databaseUrl = Object.assign(new URL(serverUrl), { pathname: `/${name}` }).toString();
  try {
    await work(databaseUrl);
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const { rows } = await client.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name");
    await client.end();
    return rows.map((row) => row.table_name);
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}
