// Outbox relay throughput: messages/s to a no-op publisher with batch 100, alternating with a hand-written SKIP LOCKED loop.
import type pg from "pg";
import { schemaStatements } from "@/blocks/outbox/postgres-schema";
import { startOutboxRelay } from "@/blocks/outbox/relay";
import { settings } from "../config";
import { runId } from "../support/services";

const BATCH = 100;

export type OutboxRelayResult = {
  rounds: number;
  messages: number;
  batch: number;
  /** Medians over the rounds. */
  relayPerSecond: number;
  loopPerSecond: number;
  /** The median of each round's relay / loop ratio (the pair ran back to back). */
  ratio: number;
  perRound: Array<{ relay: number; loop: number }>;
};

async function freshBacklog(pool: pg.Pool, table: string, messages: number): Promise<void> {
  for (const sql of schemaStatements(table)) await pool.query(sql);
  await pool.query(
    `INSERT INTO ${table} (id, topic, key, payload) SELECT gen_random_uuid(), 'order.created', 'ord_' || g, jsonb_build_object('orderId', g, 'amount', 1200) FROM generate_series(1, $1::int) g`,
    [messages],
  );
  await pool.query(`VACUUM ANALYZE ${table}`);
}

/** The block's relay, publishing to a no-op until every message went out, then stop() (which marks the last batch). */
async function relay(pool: pg.Pool, table: string, messages: number): Promise<void> {
  let published = 0;
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  const running = startOutboxRelay({
    db: pool,
    table,
    batchSize: BATCH,
    cleanupIntervalMs: 0,
    publish: () => {
      if (++published === messages) done();
      return Promise.resolve();
    },
  });
  await all;
  await running.stop();
}

/** What a team writes by hand: a transaction per batch holding the row locks across the publish. */
async function handWritten(pool: pg.Pool, table: string): Promise<void> {
  const client = await pool.connect();
  try {
    for (;;) {
      await client.query("BEGIN");
      const { rows } = await client.query<{ id: string; topic: string; payload: unknown }>(
        `SELECT id, topic, key, payload, headers FROM ${table} WHERE published_at IS NULL ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [BATCH],
      );
      await Promise.all(rows.map(() => Promise.resolve())); // the no-op publish, as the relay gets
      if (rows.length > 0)
        await client.query(`UPDATE ${table} SET published_at = now() WHERE id = ANY($1::uuid[])`, [
          rows.map((row) => row.id),
        ]);
      await client.query("COMMIT");
      if (rows.length === 0) return;
    }
  } finally {
    client.release();
  }
}

async function measure(
  pool: pg.Pool,
  table: string,
  messages: number,
  drain: (table: string) => Promise<void>,
): Promise<number> {
  await freshBacklog(pool, table, messages);
  const started = performance.now();
  await drain(table);
  const seconds = (performance.now() - started) / 1000;
  const { rows } = await pool.query<{ left: number }>(
    `SELECT count(*)::int AS left FROM ${table} WHERE published_at IS NULL`,
  );
  await pool.query(`DROP TABLE ${table}`);
  if (rows[0]?.left !== 0) throw new Error(`${table}: ${rows[0]?.left} messages left unpublished`);
  return messages / seconds;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** Each round seeds a fresh backlog and drains it with each contender, in alternating order. */
export async function outboxRelay(pool: pg.Pool, messages = settings.outboxMessages): Promise<OutboxRelayResult> {
  const rounds = Math.max(3, settings.rounds);
  const table = (kind: string, round: number) => `bench_${runId}_outbox_${kind}_${round}`;
  const drainers = {
    relay: (t: string) => relay(pool, t, messages),
    loop: (t: string) => handWritten(pool, t),
  };
  await measure(pool, table("warmup", 0), messages, drainers.relay);
  const perRound: OutboxRelayResult["perRound"] = [];
  for (let round = 1; round <= rounds; round++) {
    // Alternating, so a slower moment of the shared machine lands on both.
    const order = round % 2 === 1 ? (["relay", "loop"] as const) : (["loop", "relay"] as const);
    const rates: Record<string, number> = {};
    for (const kind of order) rates[kind] = await measure(pool, table(kind, round), messages, drainers[kind]);
    perRound.push({ relay: Math.round(rates.relay as number), loop: Math.round(rates.loop as number) });
    console.log(
      `  round ${round}: relay ${perRound.at(-1)?.relay} msg/s, hand-written loop ${perRound.at(-1)?.loop} msg/s`,
    );
  }
  return {
    rounds,
    messages,
    batch: BATCH,
    relayPerSecond: median(perRound.map((r) => r.relay)),
    loopPerSecond: median(perRound.map((r) => r.loop)),
    ratio: Math.round(median(perRound.map((r) => r.relay / r.loop)) * 100) / 100,
    perRound,
  };
}
