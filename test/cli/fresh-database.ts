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
export async function withFreshDatabase(
  serverUrl: string,
  work: (databaseUrl: string) => Promise<unknown>,
): Promise<string[]> {
  const database = await freshDatabase(serverUrl);
  try {
    await work(database.url);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const { rows } = await client.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
    );
    await client.end();
    return rows.map((row) => row.table_name);
  } finally {
    await database.drop();
  }
}

/**
 * A new database on `serverUrl`'s server, for a suite that spans several tests (a fixture's server and its checks).
 *
 * @example
 * const database = await freshDatabase(process.env.DATABASE_URL!); // in beforeAll; database.drop() in afterAll
 */
export async function freshDatabase(serverUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `blocks_test_${randomUUID().replace(/-/g, "").slice(0, 12)}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const drop = async () => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await client.end();
    }
  };
  return { url: Object.assign(new URL(serverUrl), { pathname: `/${name}` }).toString(), drop };
}
