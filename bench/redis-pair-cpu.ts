// Redis's own CPU per first request (create + markSuccess) through RedisStore: starts a private redis-server
// (so other users of the machine's Redis do not count), runs the pairs, and reads the server's INFO deltas.
// `npx tsx bench/redis-pair-cpu.ts [pairs] [rounds] [other redis-store.ts ...]`: with other modules (e.g. an
// earlier checkout's RedisStore), each round runs every store in turn (order reversed every other round).
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { median, pairedRatio, round } from "./report/stats";
import { cpuSeconds } from "./support/redis-info";

const [pairsArg = "20000", roundsArg = "5", ...others] = process.argv.slice(2);
const PAIRS = Number(pairsArg);
const ROUNDS = Number(roundsArg);
const IN_FLIGHT = 32;
const PORT = 6391 + (process.pid % 500);

type Store = {
  create(input: {
    scope: { operation: string; userId: string; key: string };
    requestHash: string;
    ttlMs: number;
    token: string;
  }): Promise<{ status: string }>;
  markSuccess(
    scope: { operation: string; userId: string; key: string },
    token: string,
    response: string | null,
    ttlMs: number,
  ): Promise<boolean>;
};
type StoreClass = new (redis: Redis, options?: { keyPrefix?: string }) => Store;

const RESPONSE = JSON.stringify({
  status: 201,
  headers: { "content-type": "application/json" },
  body: '{"id":"pay_1","amount":1250,"currency":"EUR"}',
});

/** used_cpu_sys + used_cpu_user in µs, and EVALSHA's calls and µs, from one INFO reply. */
async function serverCpu(redis: Redis): Promise<{ cpuUs: number; evalCalls: number; evalUs: number }> {
  const info = await redis.info("all");
  const evalsha = /^cmdstat_evalsha:calls=(\d+),usec=(\d+)/m.exec(info);
  return {
    cpuUs: cpuSeconds(info) * 1e6,
    evalCalls: Number(evalsha?.[1] ?? 0),
    evalUs: Number(evalsha?.[2] ?? 0),
  };
}

async function pairs(store: Store, tag: string): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < PAIRS) {
      const scope = { operation: "POST /payments", userId: "u_bench", key: `${tag}-${next++}` };
      const token = randomUUID();
      const created = await store.create({
        scope,
        requestHash: "3a1f0c6e9b2d4f8a7c5e1b0d9f2a6c4e8b7d3f1a5c9e0b2d4f6a8c1e3b5d7f9a",
        ttlMs: 86_400_000,
        token,
      });
      if (created.status !== "CREATED" || !(await store.markSuccess(scope, token, RESPONSE, 86_400_000)))
        throw new Error(`pair ${scope.key} did not complete`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
}

async function main(): Promise<void> {
  const server = spawn(
    "redis-server",
    ["--port", String(PORT), "--save", "", "--appendonly", "no", "--bind", "127.0.0.1"],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve, reject) => {
    server.stdout.on("data", (chunk: Buffer) => chunk.toString().includes("Ready to accept") && resolve());
    server.on("exit", (code) => reject(new Error(`redis-server exited with ${code}`)));
  });
  const redis = new Redis({ port: PORT, host: "127.0.0.1" });
  try {
    const modules = [
      new URL("../registry/idempotency/stores/redis-store.ts", import.meta.url).href,
      ...others.map((path) => new URL(path, `file://${process.cwd()}/`).href),
    ];
    const stores = await Promise.all(
      modules.map(async (href, i) => {
        const { RedisStore } = (await import(href)) as { RedisStore: StoreClass };
        return {
          label: i === 0 ? "this checkout" : (others[i - 1] as string),
          store: new RedisStore(redis, { keyPrefix: `b${i}:` }),
          cpu: [] as number[],
          evalUs: [] as number[],
        };
      }),
    );
    for (const { store, label } of stores) await pairs(store, `warm-${label}`);
    for (let r = 0; r < ROUNDS; r++) {
      for (const entry of r % 2 === 0 ? stores : [...stores].reverse()) {
        await redis.flushall();
        const before = await serverCpu(redis);
        await pairs(entry.store, `r${r}`);
        const after = await serverCpu(redis);
        entry.cpu.push((after.cpuUs - before.cpuUs) / PAIRS);
        entry.evalUs.push((after.evalUs - before.evalUs) / (after.evalCalls - before.evalCalls));
        console.log(
          `  r${r} ${entry.label.padEnd(40)} ${round(entry.cpu.at(-1) as number)} µs of redis-server CPU per pair, EVALSHA ${round(entry.evalUs.at(-1) as number)} µs per call`,
        );
      }
    }
    const [first] = stores;
    for (const entry of stores) {
      const vs =
        entry === first || !first
          ? ""
          : `, ${round(pairedRatio(first.cpu, entry.cpu))}x of it for this checkout (paired by round)`;
      console.log(
        `${entry.label}: median ${round(median(entry.cpu))} µs per pair, EVALSHA ${round(median(entry.evalUs))} µs per call (${PAIRS} pairs x ${ROUNDS} rounds)${vs}`,
      );
    }
  } finally {
    redis.disconnect();
    server.kill();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
