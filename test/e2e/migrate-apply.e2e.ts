// `blocks migrate --apply` through the built CLI on real PostgreSQL, twice: the second run changes nothing.
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { blocks, copyFixture } from "./harness.js";

const url = process.env.DATABASE_URL;

describe("blocks migrate --apply", () => {
  const project = copyFixture("hono-bundler");
  const table = `blocks_e2e_${process.pid}`;
  afterAll(async () => {
    project.remove();
    if (!url) return;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`DROP TABLE IF EXISTS ${table}, ${table}_retries`);
    await client.query(`DROP FUNCTION IF EXISTS ${table}_claim, ${table}_complete`);
    await client.end();
  });

  it.skipIf(!url)("[DATABASE_URL] creates the tables, then reports a second run as already up to date", async () => {
    const first = await blocks(project.dir, ["migrate", "idempotency", "--apply", "--table", table, "--json"]);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).applied).toEqual([{ table, alreadyApplied: false }]);
    const second = await blocks(project.dir, ["migrate", "idempotency", "--apply", "--table", table, "--json"]);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ written: [], applied: [{ table, alreadyApplied: true }] });
  });

  it("refuses an invalid --table before touching the database, as JSON with --json", async () => {
    const args = ["migrate", "idempotency", "--apply", "--table", "x; DROP TABLE users"];
    const run = await blocks(project.dir, args, { DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("INVALID_TABLE_NAME");
    const json = await blocks(project.dir, [...args, "--json"]);
    expect(json.exitCode).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      error: { code: "INVALID_TABLE_NAME", suggestion: expect.any(String) },
    });
  });
});
