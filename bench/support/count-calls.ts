// Counts round trips: every query on a pg Pool and every command an ioredis client sends.
import type pg from "pg";
import type { Redis } from "ioredis";

export type RoundTrips = { store: number; cache: number };

export class RoundTripCounter {
  store = 0;
  cache = 0;

  reset(): void {
    this.store = 0;
    this.cache = 0;
  }

  snapshot(): RoundTrips {
    return { store: this.store, cache: this.cache };
  }
}

/** Wraps `pool.query` in place, so whatever holds the pool (our store) is counted without knowing it. */
export function countPoolQueries(pool: pg.Pool, counter: RoundTripCounter): pg.Pool {
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as { query: unknown }).query = (...args: unknown[]) => {
    counter.store++;
    return query(...args);
  };
  return pool;
}

/** Wraps `sendCommand`, the one path every ioredis command takes to the server. */
export function countRedisCommands(redis: Redis, counter: RoundTripCounter): Redis {
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (...args: Parameters<Redis["sendCommand"]>) => {
    counter.cache++;
    return send(...args);
  };
  return redis;
}
