// Scenario 6: transactional mode (issue 14): first requests through `executeInTransaction` on a plain pg Pool against the
// two-commit floor plus the same business INSERT, and non-transactional `execute` through each database
// client adapter against the `pg` adapter. In process (the work is the database's): `connections` lanes of
// fresh keys per turn, contenders in alternation, ratios taken round by round.
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { pgClient } from "@/blocks/idempotency/stores/clients/pg";
import { PostgresStore, type TransactionalSqlClient } from "@/blocks/idempotency/stores/postgres-store";
import { openClient, type ClientName } from "../../test/idempotency/support/client-harness";
import { settings } from "../config";
import { median, pairedRatio, round } from "../report/stats";
import { createRunTable, openPool, runId, runTableName } from "../support/services";

type Turn = { requestsPerSecond: number; p99Ms: number; commitsPerRequest: number };
export type Contender = { label: string; request: (key: string) => Promise<unknown>; commits: () => number };

export type TransactionalRow = {
  label: string;
  requestsPerSecond: number;
  p99Ms: number;
  commitsPerRequest: number;
  rounds: Turn[];
  /** Against the floor (transactional) or the pg adapter (clients), round by round. */
  versus?: { to: string; requestsPerSecond: number; p99: number } | undefined;
  /** Shown for comparison, not held to a target: a configuration the generated wiring does not use. */
  informational?: boolean | undefined;
};
export type TransactionalResult = {
  turnSeconds: number;
  lanes: number;
  vsFloor: TransactionalRow[];
  clients: TransactionalRow[];
};

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

async function turn(contender: Contender, seconds: number, lanes: number): Promise<Turn> {
  const latencies: number[] = [];
  const commitsBefore = contender.commits();
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (performance.now() < end) {
        const started = performance.now();
        await contender.request(`${runId}-${randomUUID()}`);
        latencies.push(performance.now() - started);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return {
    requestsPerSecond: round(latencies.length / seconds, 0),
    p99Ms: round(latencies[Math.ceil(latencies.length * 0.99) - 1] ?? Number.NaN),
    commitsPerRequest: round((contender.commits() - commitsBefore) / latencies.length),
  };
}

/** A B C, then C B A, ...; the first contender is the baseline every other one is compared with. */
export async function alternate(contenders: Contender[], lanes = settings.connections): Promise<TransactionalRow[]> {
  const seconds = settings.transactionalSeconds;
  const turns = new Map<Contender, Turn[]>(contenders.map((c) => [c, []]));
  for (const contender of contenders) await turn(contender, Math.min(seconds, settings.warmupSeconds), lanes);
  for (let r = 0; r < settings.rounds; r++) {
    for (const contender of r % 2 === 0 ? contenders : [...contenders].reverse()) {
      const result = await turn(contender, seconds, lanes);
      turns.get(contender)?.push(result);
      console.log(
        `  [r${r}] ${contender.label.padEnd(40)} ${String(result.requestsPerSecond).padStart(6)} req/s  p99 ${result.p99Ms} ms  ${result.commitsPerRequest} commits per request`,
      );
    }
  }
  const base = turns.get(contenders[0] as Contender) ?? [];
  return contenders.map((contender, i) => {
    const list = turns.get(contender) ?? [];
    const versus =
      i === 0
        ? undefined
        : {
            to: contenders[0]?.label ?? "",
            requestsPerSecond: round(pairedRatio(pick(list, "requestsPerSecond"), pick(base, "requestsPerSecond"))),
            p99: round(pairedRatio(pick(list, "p99Ms"), pick(base, "p99Ms"))),
          };
    return { ...summary(contender.label, list), versus };
  });
}

const pick = (list: Turn[], field: keyof Turn) => list.map((t) => t[field]);

/** A contender's row from its turns: the median of each figure. */
function summary(label: string, rounds: Turn[]): TransactionalRow {
  return {
    label,
    requestsPerSecond: round(median(pick(rounds, "requestsPerSecond")), 0),
    p99Ms: round(median(pick(rounds, "p99Ms"))),
    commitsPerRequest: round(median(pick(rounds, "commitsPerRequest"))),
    rounds,
  };
}

async function ordersTable(admin: pg.Pool, purpose: string): Promise<string> {
  const table = runTableName(`${purpose}_orders`);
  await admin.query(`CREATE TABLE ${table} (id BIGSERIAL PRIMARY KEY, key TEXT NOT NULL, amount INT NOT NULL)`);
  return table;
}

/**
 * A WAL flush as slow as networked block storage makes it (EBS, a synchronous standby: about a millisecond,
 * where this machine's disk flushes in ~0.1 ms): PostgreSQL waits `commit_delay` µs inside every flush,
 * holding the WAL write lock as a slow fsync would, so concurrent commits still share a flush.
 */
const NETWORKED_FLUSH_US = 1000;

/**
 * Where the database is not saturated, a request waits for its commits instead of for CPU: 4 lanes, where
 * 16 keep both contenders CPU-bound on this 2-core machine (PostgreSQL, the pool and the load share it).
 */
const UNSATURATED_LANES = 4;

/**
 * Transactional first requests against the floor of bench/servers/floor-route.ts with the same business INSERT
 * between its two commits; `flushDelayUs` adds that much to every WAL flush of the pool's sessions.
 */
async function transactionalVsFloor(
  admin: pg.Pool,
  flushDelayUs = 0,
  lanes = settings.connections,
): Promise<TransactionalRow[]> {
  const pool = openPool(
    settings.poolSize,
    flushDelayUs ? `-c commit_delay=${flushDelayUs} -c commit_siblings=0` : undefined,
  );
  const suffix = `${flushDelayUs ? `, ${flushDelayUs / 1000} ms WAL flush` : ""}${lanes === settings.connections ? "" : `, ${lanes} lanes`}`;
  const tag = `${flushDelayUs ? "_slow" : ""}${lanes === settings.connections ? "" : `_${lanes}`}`;
  try {
    const { counter, client } = counting(pgClient(pool));
    const txTable = await createRunTable(admin, `tx${tag}`);
    const txOrders = await ordersTable(admin, `tx${tag}`);
    const handler = new IdempotencyHandler(new PostgresStore(client, { table: txTable }));
    const transactional: Contender = {
      label: `executeInTransaction (pg Pool${suffix})`,
      request: (key) =>
        handler.executeInTransaction(
          { operation: "orders:create", userId: "u_bench", key, payload: { amount: 1 } },
          async ({ tx }) => {
            const { rows } = await tx.query(`INSERT INTO ${txOrders} (key, amount) VALUES ($1, 1) RETURNING id`, [key]);
            return { orderId: rows[0].id };
          },
        ),
      commits: () => counter.commits,
    };
    const floorTable = await createRunTable(admin, `txfloor${tag}`);
    const floorOrders = await ordersTable(admin, `txfloor${tag}`);
    const floorCounter = { commits: 0 };
    const q = (text: string, params: unknown[]) => (floorCounter.commits++, pool.query(text, params));
    const floor: Contender = {
      label: `two-commit floor + INSERT (pg Pool${suffix})`,
      async request(key) {
        const inserted = await q(
          `INSERT INTO ${floorTable} (operation, user_id, key, request_hash, status, token, expires_at)
           VALUES ($1, $2, $3, '', 'PROCESSING', gen_random_uuid(), now() + interval '1 day')
           ON CONFLICT (operation, user_id, key) DO NOTHING RETURNING token`,
          ["orders:create", "u_bench", key],
        );
        if (inserted.rows.length !== 1) throw new Error("the floor got a key twice: fresh keys only");
        const { rows } = await q(`INSERT INTO ${floorOrders} (key, amount) VALUES ($1, 1) RETURNING id`, [key]);
        await q(
          `UPDATE ${floorTable} SET status = 'SUCCESS', response = $4, updated_at = now() WHERE operation = $1 AND user_id = $2 AND key = $3`,
          ["orders:create", "u_bench", key, JSON.stringify({ orderId: (rows[0] as { id: string }).id })],
        );
      },
      commits: () => floorCounter.commits,
    };
    return await alternate([floor, transactional], lanes);
  } finally {
    await pool.end();
  }
}

/**
 * The pg adapter first: every other client is compared with it. PGlite is in-process and single-connection:
 * not a req/s peer. `informational`: shown for comparison, not a configuration the generated wiring uses.
 */
const CLIENTS: Array<{ name: ClientName; label: string; informational?: boolean }> = [
  { name: "pg-pool", label: "pg Pool" },
  { name: "postgres-js", label: "postgres.js" },
  { name: "drizzle-pg", label: "Drizzle over node-postgres" },
  { name: "drizzle-postgres-js", label: "Drizzle over postgres.js" },
  { name: "prisma-pool", label: "Prisma (@prisma/adapter-pg), store statements on its pg Pool (the wiring's default)" },
  { name: "prisma", label: "Prisma without `pool`: every statement through its query engine", informational: true },
  { name: "kysely", label: "Kysely" },
];

/**
 * Non-transactional `execute` (first requests) through each client adapter, each in its own alternation
 * with the pg adapter (pg X, X pg, ...): in one long alternation of all seven, turns far apart in time
 * differed by ±20 % on this shared machine, even between clients that send the same statements.
 */
async function executePerClient(admin: pg.Pool): Promise<TransactionalRow[]> {
  const opened: Array<{ close(): Promise<void> }> = [];
  try {
    const contenders: Array<Contender & { informational?: boolean | undefined }> = [];
    for (const { name, label, informational } of CLIENTS) {
      const client = await openClient(name, settings.databaseUrl);
      opened.push(client);
      const { counter, client: counted } = counting(client.client);
      const table = await createRunTable(admin, `exec_${name.replace(/-/g, "_")}`);
      const handler = new IdempotencyHandler(new PostgresStore(counted, { table }));
      contenders.push({
        label,
        informational,
        request: (key) =>
          handler.execute({ operation: "orders:create", userId: "u_bench", key, payload: { amount: 1 } }, () => ({
            orderId: key,
          })),
        commits: () => counter.commits,
      });
    }
    const [pgAdapter, ...others] = contenders as [Contender, ...typeof contenders];
    const rows: TransactionalRow[] = [];
    // The pg adapter's own row gathers its turns of every pairing.
    const pgTurns: Turn[] = [];
    for (const other of others) {
      const [base, row] = (await alternate([pgAdapter, other])) as [TransactionalRow, TransactionalRow];
      pgTurns.push(...base.rounds);
      rows.push({ ...row, informational: other.informational });
    }
    return [summary(pgAdapter.label, pgTurns), ...rows];
  } finally {
    for (const client of opened) await client.close();
  }
}

export async function transactional(): Promise<TransactionalResult> {
  const admin = openPool(2);
  try {
    console.log("executeInTransaction against the two-commit floor:");
    const vsFloor = await transactionalVsFloor(admin);
    console.log(`\nthe same, every WAL flush ${NETWORKED_FLUSH_US} µs slower (commit_delay):`);
    vsFloor.push(...(await transactionalVsFloor(admin, NETWORKED_FLUSH_US)));
    console.log(`\nthe same with ${UNSATURATED_LANES} lanes, so that neither saturates the machine:`);
    vsFloor.push(...(await transactionalVsFloor(admin, NETWORKED_FLUSH_US, UNSATURATED_LANES)));
    console.log("\nexecute per database client:");
    const clients = await executePerClient(admin);
    return { turnSeconds: settings.transactionalSeconds, lanes: settings.connections, vsFloor, clients };
  } finally {
    await admin.end();
  }
}
