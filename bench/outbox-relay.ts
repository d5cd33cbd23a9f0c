// Outbox relay throughput: messages/s to a no-op publisher with batch 100, alternating with a hand-written SKIP LOCKED loop.
//
//   DATABASE_URL=postgres://... npx tsx bench/outbox-relay.ts [rounds=5] [messages=20000]
//
// Not part of `npm run bench` (run it by hand). Targets (issue 30): >= 5,000 msg/s, and >= 0.9x the loop.
import pg from "pg";
import { schemaStatements } from "../registry/outbox/postgres-schema";
import { startOutboxRelay } from "../registry/outbox/relay";

const BATCH = 100;
const rounds = Number(process.argv[2] ?? 5);
const messages = Number(process.argv[3] ?? 20_000);
const url = process.env.DATABASE_URL;
if (!url) throw new Error("Set DATABASE_URL: the bench measures a real PostgreSQL.");
const pool = new pg.Pool({ connectionString: url, max: 4 });

async function freshBacklog(table: string): Promise<void> {
  for (const sql of schemaStatements(table)) await pool.query(sql);
  await pool.query(
    `INSERT INTO ${table} (id, topic, key, payload) SELECT gen_random_uuid(), 'order.created', 'ord_' || g, jsonb_build_object('orderId', g, 'amount', 1200) FROM generate_series(1, $1::int) g`,
    [messages],
  );
  await pool.query(`VACUUM ANALYZE ${table}`);
}

/** The block's relay, publishing to a no-op until every message went out, then stop() (which marks the last batch). */
async function relay(table: string): Promise<void> {
  let published = 0;
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  const running = startOutboxRelay({
    db: pool,
    table,
    batchSize: BATCH,
    cleanupIntervalMs: 0,
    publish: async () => {
      if (++published === messages) done();
    },
  });
  await all;
  await running.stop();
}

/** What a team writes by hand: a transaction per batch holding the row locks across the publish. */
async function handWritten(table: string): Promise<void> {
  const client = await pool.connect();
  try {
    for (;;) {
      await client.query("BEGIN");
      const { rows } = await client.query<{ id: string; topic: string; payload: unknown }>(
        `SELECT id, topic, key, payload, headers FROM ${table} WHERE published_at IS NULL ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [BATCH],
      );
      await Promise.all(rows.map(async () => {})); // the no-op publish, as the relay gets
      if (rows.length > 0) await client.query(`UPDATE ${table} SET published_at = now() WHERE id = ANY($1::uuid[])`, [rows.map((row) => row.id)]);
      await client.query("COMMIT");
      if (rows.length === 0) return;
    }
  } finally {
    client.release();
  }
}

async function measure(kind: string, round: number, drain: (table: string) => Promise<void>): Promise<number> {
  const table = `bench_outbox_${process.pid}_${round}_${kind}`;
  await freshBacklog(table);
  const started = performance.now();
  await drain(table);
  const seconds = (performance.now() - started) / 1000;
  const { rows } = await pool.query<{ left: number }>(`SELECT count(*)::int AS left FROM ${table} WHERE published_at IS NULL`);
  await pool.query(`DROP TABLE ${table}`);
  if (rows[0]?.left !== 0) throw new Error(`${kind}: ${rows[0]?.left} messages left unpublished`);
  return messages / seconds;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const relayRates: number[] = [];
const loopRates: number[] = [];
try {
  await measure("warmup", 0, relay);
  for (let round = 1; round <= rounds; round++) {
    // Alternating, so a slower moment of the shared machine lands on both.
    const first = round % 2 === 1;
    if (first) relayRates.push(await measure("relay", round, relay));
    loopRates.push(await measure("loop", round, handWritten));
    if (!first) relayRates.push(await measure("relay", round, relay));
    console.log(`round ${round}: relay ${relayRates.at(-1)?.toFixed(0)} msg/s, hand-written loop ${loopRates.at(-1)?.toFixed(0)} msg/s`);
  }
  const relayMedian = median(relayRates);
  const loopMedian = median(loopRates);
  // The ratio of each round's back-to-back pair, then the median: the shared machine's load moves both alike.
  const ratio = median(relayRates.map((rate, i) => rate / (loopRates[i] as number)));
  console.log(
    `median over ${rounds} rounds of ${messages} messages, batch ${BATCH}: relay ${relayMedian.toFixed(0)} msg/s (target >= 5000: ${relayMedian >= 5000 ? "met" : "MISSED"}), ` +
      `hand-written loop ${loopMedian.toFixed(0)} msg/s, median per-round ratio ${ratio.toFixed(2)}x (target >= 0.9x: ${ratio >= 0.9 ? "met" : "MISSED"})`,
  );
} finally {
  await pool.end();
}
