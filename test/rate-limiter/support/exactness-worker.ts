// A second process for the exactness test: opens its own client, waits for "go", fires its share of requests at once.
// argv: <redis|postgres> <prefix-or-table> <requests>; replies { ready } then { allowed }.
import { RateLimiter } from "@/blocks/rate-limiter/limiter";
import { PostgresRateLimitStore } from "@/blocks/rate-limiter/stores/postgres-store";
import { RedisRateLimitStore } from "@/blocks/rate-limiter/stores/redis-store";
import type { RateLimitStore } from "@/blocks/rate-limiter/types";
import { openPool, openRedis } from "./stores";

const EXACTNESS_POLICY = { name: "exact", limit: 10, windowMs: 3_600_000 };

async function main(): Promise<void> {
  const [kind, name, requests] = process.argv.slice(2);
  const count = Number(requests);
  let store: RateLimitStore;
  let close: () => Promise<void>;
  if (kind === "redis") {
    const redis = await openRedis();
    store = new RedisRateLimitStore(redis, { prefix: name });
    close = async () => void redis.disconnect();
  } else {
    const pool = await openPool(undefined, count);
    // Open every connection now, so "go" starts the requests rather than the connection handshakes.
    const clients = await Promise.all(Array.from({ length: count }, () => pool.connect()));
    for (const client of clients) client.release();
    store = new PostgresRateLimitStore(pool, { table: name });
    close = () => pool.end();
  }
  const limiter = new RateLimiter(store, {
    ...EXACTNESS_POLICY,
    timeoutMs: 30_000,
    onStoreError: "deny",
    maxInFlight: count,
  });
  process.once("message", async () => {
    const decisions = await Promise.all(Array.from({ length: count }, () => limiter.check("user:u_1")));
    process.send?.({ allowed: decisions.filter((d) => d.allowed).length });
    await close();
    process.disconnect();
  });
  process.send?.({ ready: true });
}

void main();
