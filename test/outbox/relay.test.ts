// The relay on a real PostgreSQL: parallel relays, LISTEN/NOTIFY wake-up, metrics (PGlite has one connection: no SKIP LOCKED race there).
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { addToOutbox } from "@/blocks/outbox/add-to-outbox";
import type { OutboxMetrics } from "@/blocks/outbox/metrics";
import { startOutboxRelay } from "@/blocks/outbox/relay";
import { databaseUrl, freshOutbox, until } from "./support/outbox-tables";

describe.skipIf(!databaseUrl)("[DATABASE_URL] startOutboxRelay on PostgreSQL", { timeout: 120_000 }, () => {
  let pool: pg.Pool;
  let outbox: Awaited<ReturnType<typeof freshOutbox>>;
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: databaseUrl, max: 8 });
  });
  beforeEach(async () => {
    await outbox?.drop();
    outbox = await freshOutbox(pool, "outbox_relay");
  });
  afterAll(async () => {
    await outbox?.drop();
    await pool.end();
  });

  const backlog = (count: number) =>
    pool.query(
      `INSERT INTO ${outbox.table} (id, topic, payload) SELECT gen_random_uuid(), 'order.created', to_jsonb(g) FROM generate_series(1, $1::int) g`,
      [count],
    );

  it("three relays in parallel drain a backlog of 3000 without publishing a row twice", async () => {
    await backlog(3000);
    const published = new Map<string, number>();
    const perRelay = [0, 0, 0];
    const relays = perRelay.map((_, i) =>
      startOutboxRelay({
        db: pool,
        table: outbox.table,
        batchSize: 50,
        pollMs: 10,
        publish: async (message) => {
          published.set(message.id, (published.get(message.id) ?? 0) + 1);
          perRelay[i]! += 1;
          // A broker round trip, so the relays' batches overlap in time.
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 2));
        },
      }),
    );
    await until(
      async () =>
        (await pool.query(`SELECT count(*)::int AS n FROM ${outbox.table} WHERE published_at IS NULL`)).rows[0].n === 0,
      60_000,
      "backlog drained",
    );
    await Promise.all(relays.map((relay) => relay.stop()));
    expect(published.size).toBe(3000);
    expect([...published.values()].filter((count) => count > 1)).toEqual([]);
    // Each relay took a share: they ran side by side, not one after another.
    for (const count of perRelay) expect(count).toBeGreaterThan(0);
  });

  it("three relays on messages that always fail: each is tried maxAttempts times in all, and onDead is called once per message", async () => {
    await backlog(50);
    const tries = new Map<string, number>();
    const dead = new Map<string, number>();
    const relays = [0, 1, 2].map(() =>
      startOutboxRelay({
        db: pool,
        table: outbox.table,
        batchSize: 5,
        pollMs: 5,
        maxAttempts: 3,
        retryBaseMs: 5,
        publish: async (message) => {
          tries.set(message.id, (tries.get(message.id) ?? 0) + 1);
          throw new Error("broker refused");
        },
        onDead: (message) => void dead.set(message.id, (dead.get(message.id) ?? 0) + 1),
      }),
    );
    await until(() => dead.size === 50, 30_000, "every message dead");
    await new Promise((resolve) => setTimeout(resolve, 100));
    await Promise.all(relays.map((relay) => relay.stop()));
    expect(new Set(tries.values())).toEqual(new Set([3]));
    expect(new Set(dead.values())).toEqual(new Set([1]));
  });

  it("wakes on the commit's notification instead of waiting for the next poll", async () => {
    const listener = new pg.Client({ connectionString: databaseUrl });
    await listener.connect();
    const published: string[] = [];
    const relay = startOutboxRelay({
      db: pool,
      table: outbox.table,
      pollMs: 60_000,
      listen: listener,
      publish: async (message) => void published.push(message.id),
    });
    await new Promise((resolve) => setTimeout(resolve, 200)); // the relay's first (empty) round, then its long sleep
    const client = await pool.connect();
    await client.query("BEGIN");
    const id = await addToOutbox(
      client,
      { topic: "order.created", payload: {} },
      { table: outbox.table, notify: true },
    );
    await client.query("COMMIT");
    client.release();
    const committedAt = Date.now();
    await until(() => published.includes(id), 5000, "published after NOTIFY");
    expect(Date.now() - committedAt).toBeLessThan(5000);
    await relay.stop();
    await listener.end();
  });

  it("reports backlog, oldest age, published, failed and dead", async () => {
    await backlog(3);
    await pool.query(`UPDATE ${outbox.table} SET created_at = now() - interval '90 seconds'`);
    const counters = new Map<string, number>();
    const gauges = new Map<string, number[]>();
    const metrics: OutboxMetrics = {
      increment: (id, labels, value = 1) =>
        void counters.set(`${id}:${labels.topic}`, (counters.get(`${id}:${labels.topic}`) ?? 0) + value),
      set: (id, value) => void gauges.set(id, [...(gauges.get(id) ?? []), value]),
    };
    let calls = 0;
    const relay = startOutboxRelay({
      db: pool,
      table: outbox.table,
      pollMs: 10,
      maxAttempts: 2,
      retryBaseMs: 10,
      metricsIntervalMs: 20,
      metrics,
      // The first message fails for good; the others go through.
      publish: async (message) => {
        calls++;
        if (message.payload === 1) throw new Error("rejected by broker");
      },
    });
    await until(
      () => counters.get("dead:order.created") === 1 && (gauges.get("backlog") ?? []).at(-1) === 0,
      10_000,
      "dead and drained",
    );
    await relay.stop();
    expect(calls).toBe(4);
    expect(Object.fromEntries(counters)).toEqual({
      "published:order.created": 2,
      "failed:order.created": 2,
      "dead:order.created": 1,
    });
    // Sampled after the first batch: two published, the failing one backing off.
    expect(gauges.get("backlog")?.[0]).toBe(1);
    expect(gauges.get("oldestAge")?.[0]).toBeGreaterThanOrEqual(90);
    expect(gauges.get("oldestAge")?.at(-1)).toBe(0);
  });
});

describe.skipIf(!databaseUrl)(
  "[DATABASE_URL] startOutboxRelay when LISTEN does not answer",
  { timeout: 60_000 },
  () => {
    it("a LISTEN that never answers (a pg Client not connected queues it) does not hold the relay: it publishes by polling", async () => {
      const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
      const outbox = await freshOutbox(pool, "outbox_listen");
      const notConnected = new pg.Client({ connectionString: databaseUrl });
      const published: string[] = [];
      try {
        const relay = startOutboxRelay({
          db: pool,
          table: outbox.table,
          pollMs: 20,
          listen: notConnected,
          publish: async (message) => void published.push(message.id),
        });
        const id = await addToOutbox(pool, { topic: "order.created", payload: {} }, { table: outbox.table });
        await until(() => published.includes(id), 10_000, "published by polling");
        await relay.stop();
        expect(published).toEqual([id]);
      } finally {
        await outbox.drop();
        await pool.end();
      }
    });
  },
);

describe.skipIf(!databaseUrl)("[DATABASE_URL] the relay's statements use their indexes", { timeout: 60_000 }, () => {
  it("the claim walks the due index and the cleanup the published index, not the whole table", async () => {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
    const outbox = await freshOutbox(pool, "outbox_plans");
    try {
      // A day of traffic: 50,000 published, 100 pending.
      await pool.query(
        `INSERT INTO ${outbox.table} (id, topic, payload, published_at) SELECT gen_random_uuid(), 't', '{}', CASE WHEN g > 100 THEN now() - g * interval '1 second' END FROM generate_series(1, 50100) g`,
      );
      await pool.query(`ANALYZE ${outbox.table}`);
      const plan = async (text: string, params: unknown[]) => {
        const client = await pool.connect();
        try {
          await client.query("BEGIN");
          const rows = (await client.query(`EXPLAIN ${text}`, params)).rows as Array<{ "QUERY PLAN": string }>;
          return rows.map((row) => row["QUERY PLAN"]).join("\n");
        } finally {
          await client.query("ROLLBACK");
          client.release();
        }
      };
      const { relayStatements } = await import("@/blocks/outbox/relay-sql");
      const sql = relayStatements(outbox.table);
      const ids = (await pool.query(`SELECT id FROM ${outbox.table} LIMIT 100`)).rows.map(
        (row: { id: string }) => row.id,
      );
      const plans = {
        claim: await plan(sql.claim, [100, 60_000]),
        markPublished: await plan(sql.markPublished, [ids]),
        recordFailures: await plan(sql.recordFailures, [ids, ids.map(() => "x"), ids.map(() => 1), 10, 1000, 60_000]),
        cleanup: await plan(sql.cleanup, [3_600_000, 1000]),
      };
      expect(plans.claim).toContain(`${outbox.table}_due_idx`);
      expect(plans.cleanup).toContain(`${outbox.table}_published_idx`);
      // The cleanup used to hash-join its batch against a sequential scan of the whole table.
      for (const [name, text] of Object.entries(plans)) expect(text, name).not.toContain("Seq Scan");
    } finally {
      await outbox.drop();
      await pool.end();
    }
  });
});
