// The relay's statements on their own (PGlite): a claim's lease, and a late report on an older claim left without effect.
import { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, expect, it } from "vitest";
import { addToOutbox } from "@/blocks/outbox/add-to-outbox";
import { schemaStatements } from "@/blocks/outbox/postgres-schema";
import { relayStatements } from "@/blocks/outbox/relay-sql";

const table = "outbox_fence";
const sql = relayStatements(table);
let db: PGlite;
beforeAll(async () => {
  db = new PGlite();
  for (const statement of schemaStatements(table)) await db.query(statement);
});
afterAll(() => db.close());

it("a claimed row is out of reach until its lease ends; a failure reported on the older claim then changes nothing", async () => {
  const id = await addToOutbox(db, { topic: "order.created", payload: {} }, { table });
  const first = await db.query<{ id: string; attempts: number }>(sql.claim, [10, 60_000]);
  expect(first.rows.map((row) => [row.id, row.attempts])).toEqual([[id, 1]]);
  expect((await db.query(sql.claim, [10, 60_000])).rows).toEqual([]);

  // The lease runs out (the first relay's publish is stuck), and another relay claims it.
  await db.query(`UPDATE ${table} SET available_at = now() - interval '1 second'`);
  expect((await db.query<{ attempts: number }>(sql.claim, [10, 60_000])).rows.map((row) => row.attempts)).toEqual([2]);

  // The first relay now reports its failure: it would push the second claim's row back, or kill it.
  const late = await db.query(sql.recordFailures, [[id], ["timed out"], [1], 1, 1000, 60_000]);
  expect(late.rows).toEqual([]);
  const { rows } = await db.query<{ last_error: string | null; dead: boolean; attempts: number }>(
    `SELECT last_error, dead_at IS NOT NULL AS dead, attempts FROM ${table}`,
  );
  expect(rows).toEqual([{ last_error: null, dead: false, attempts: 2 }]);
});
