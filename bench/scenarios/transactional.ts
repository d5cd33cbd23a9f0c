// Standalone: transactional first requests vs the two-commit floor on a pg Pool, and `execute` per client adapter vs `pg`.
// Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/scenarios/transactional.ts [seconds-per-turn] [rounds] [concurrency]
import { randomUUID } from "node:crypto";
import pg from "pg";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { pgClient } from "@/blocks/idempotency/stores/clients/pg";
import { PostgresStore, type TransactionalSqlClient } from "@/blocks/idempotency/stores/postgres-store";
import { openClient, type ClientName } from "../../test/idempotency/support/client-harness";

const url = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const [seconds = 3, rounds = 3, concurrency = 16] = process.argv.slice(2).map(Number);
const run = `btx_${process.pid.toString(36)}${Math.random().toString(36).slice(2, 6)}`;

/** Counts commits as they reach the database: statements outside a transaction, plus committed transactions. */
function counting<Tx>(client: TransactionalSqlClient<Tx>) {
  const counter = { commits: 0 };
  const counted: TransactionalSqlClient<Tx> = {
    query: (text, params) => (counter.commits++, client.query(text, params)),
    transaction: async (work) => {
      const result = await client.transaction(work);
      counter.commits++;
      return result;
    },
  };
  return { counter, client: counted };
}

type Contender = { label: string; request: (key: string) => Promise<unknown>; commits: () => number };
type Turn = { rps: number; p99: number; commitsPerRequest: number };

/** `concurrency` lanes send first requests (fresh keys) for `seconds`. */
async function turn(contender: Contender): Promise<Turn> {
  const latencies: number[] = [];
  const commitsBefore = contender.commits();
  const end = performance.now() + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const started = performance.now();
        await contender.request(`${run}-${n++}-${randomUUID()}`);
        latencies.push(performance.now() - started);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return {
    rps: latencies.length / seconds,
    p99: latencies[Math.ceil(latencies.length * 0.99) - 1] ?? 0,
    commitsPerRequest: (contender.commits() - commitsBefore) / latencies.length,
  };
}

/** A B, then B A, ...: both see the same machine load; the median of each contender's rounds is reported. */
async function alternate(contenders: Contender[]): Promise<Map<string, Turn>> {
  const turns = new Map<string, Turn[]>(contenders.map((c) => [c.label, []]));
  for (const contender of contenders) await turn(contender); // warm-up
  for (let r = 0; r < rounds; r++) {
    for (const contender of r % 2 === 0 ? contenders : [...contenders].reverse()) turns.get(contender.label)!.push(await turn(contender));
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  return new Map(
    [...turns].map(([label, list]) => [
      label,
      { rps: median(list.map((t) => t.rps)), p99: median(list.map((t) => t.p99)), commitsPerRequest: median(list.map((t) => t.commitsPerRequest)) },
    ]),
  );
}

const admin = new pg.Pool({ connectionString: url, max: 2 });
const tables: string[] = [];
async function freshTables(purpose: string, client: TransactionalSqlClient<unknown> | pg.Pool = admin) {
  const table = `${run}_${purpose}`;
  tables.push(table, `${table}_retries`, `${table}_orders`);
  await new PostgresStore(client, { table }).createSchema();
  await admin.query(`CREATE TABLE ${table}_orders (id BIGSERIAL PRIMARY KEY, key TEXT NOT NULL, amount INT NOT NULL)`);
  return table;
}

async function transactionalVsFloor(): Promise<string> {
  const pool = new pg.Pool({ connectionString: url, max: concurrency });
  const { counter: txCounter, client } = counting(pgClient(pool));
  const txTable = await freshTables("tx");
  const handler = new IdempotencyHandler(new PostgresStore(client, { table: txTable }));
  const transactional: Contender = {
    label: "executeInTransaction (pg Pool)",
    request: (key) =>
      handler.executeInTransaction({ operation: "orders:create", userId: "u_bench", key, payload: { amount: 1 } }, async (tx) => {
        const { rows } = await tx.query(`INSERT INTO ${txTable}_orders (key, amount) VALUES ($1, 1) RETURNING id`, [key]);
        return { orderId: rows[0].id };
      }),
    commits: () => txCounter.commits,
  };

  // The floor of bench/servers/floor-route.ts (insert, update: two commits) with the same business INSERT between them.
  const floorTable = await freshTables("floor");
  const floorCounter = { commits: 0 };
  const q = (text: string, params: unknown[]) => (floorCounter.commits++, pool.query(text, params));
  const floor: Contender = {
    label: "two-commit floor + INSERT (pg Pool)",
    async request(key) {
      const inserted = await q(
        `INSERT INTO ${floorTable} (operation, user_id, key, request_hash, status, token, expires_at)
         VALUES ($1, $2, $3, '', 'PROCESSING', gen_random_uuid(), now() + interval '1 day')
         ON CONFLICT (operation, user_id, key) DO NOTHING RETURNING token`,
        ["orders:create", "u_bench", key],
      );
      if (inserted.rows.length !== 1) throw new Error("fresh keys only");
      const { rows } = await q(`INSERT INTO ${floorTable}_orders (key, amount) VALUES ($1, 1) RETURNING id`, [key]);
      await q(`UPDATE ${floorTable} SET status = 'SUCCESS', response = $4, updated_at = now() WHERE operation = $1 AND user_id = $2 AND key = $3`, [
        "orders:create",
        "u_bench",
        key,
        JSON.stringify({ orderId: rows[0].id }),
      ]);
    },
    commits: () => floorCounter.commits,
  };
  const results = await alternate([transactional, floor]);
  await pool.end();
  const t = results.get(transactional.label)!;
  const f = results.get(floor.label)!;
  return [
    "| first request | req/s | p99 ms | commits per request |",
    "| --- | ---: | ---: | ---: |",
    ...[transactional, floor].map((c) => {
      const r = results.get(c.label)!;
      return `| ${c.label} | ${r.rps.toFixed(0)} | ${r.p99.toFixed(1)} | ${r.commitsPerRequest.toFixed(2)} |`;
    }),
    `| ratio (transactional / floor) | ${(t.rps / f.rps).toFixed(2)}x | ${(t.p99 / f.p99).toFixed(2)}x | |`,
  ].join("\n");
}

const CLIENTS: Array<[ClientName, string]> = [
  ["pg-pool", "pg Pool"],
  ["postgres-js", "postgres.js"],
  ["drizzle-pg", "Drizzle over node-postgres"],
  ["drizzle-postgres-js", "Drizzle over postgres.js"],
  ["prisma", "Prisma (@prisma/adapter-pg)"],
  ["kysely", "Kysely"],
];

/** Non-transactional `execute` (first requests) through each client adapter, each in alternation with the `pg` adapter. */
async function executePerClient(): Promise<string> {
  const rows: string[] = ["| client | execute req/s | pg adapter req/s (same rounds) | ratio | commits per request |", "| --- | ---: | ---: | ---: | ---: |"];
  const pgOpened = await openClient("pg-pool", url);
  const pgContender = await executeContender("pg Pool", pgOpened.client, "pg");
  for (const [name, label] of CLIENTS.slice(1)) {
    const opened = await openClient(name, url);
    const contender = await executeContender(label, opened.client, name.replace(/-/g, "_"));
    const results = await alternate([contender, pgContender]);
    const c = results.get(label)!;
    const p = results.get("pg Pool")!;
    rows.push(`| ${label} | ${c.rps.toFixed(0)} | ${p.rps.toFixed(0)} | ${(c.rps / p.rps).toFixed(2)} | ${c.commitsPerRequest.toFixed(2)} |`);
    await opened.close();
  }
  await pgOpened.close();
  return rows.join("\n");
}

async function executeContender(label: string, client: TransactionalSqlClient<unknown>, purpose: string): Promise<Contender> {
  const { counter, client: counted } = counting(client);
  const table = await freshTables(`exec_${purpose}`);
  const handler = new IdempotencyHandler(new PostgresStore(counted, { table }), undefined, { heartbeatIntervalMs: 0 });
  return {
    label,
    request: (key) => handler.execute({ operation: "orders:create", userId: "u_bench", key, payload: { amount: 1 } }, async () => ({ orderId: key })),
    commits: () => counter.commits,
  };
}

try {
  console.log(`transactional bench: ${seconds} s turns, ${rounds} rounds in alternation, ${concurrency} concurrent requests; figures are noisy on a shared machine, commit counts are not\n`);
  console.log(await transactionalVsFloor());
  console.log("");
  console.log(await executePerClient());
} finally {
  for (const table of tables) await admin.query(`DROP TABLE IF EXISTS ${table}`);
  await admin.end();
}
