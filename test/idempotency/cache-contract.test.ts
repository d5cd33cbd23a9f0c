// Runs the cache contract against the no-op cache and RedisCache on REDIS_URL.
import { describe, expect, it } from "vitest";
import { describeCacheContract } from "./support/cache-contract";
import { openTestRedis, redisUrl } from "./support/services";
import { noopCache } from "@/blocks/idempotency/caches/noop-cache";
import { RedisCache } from "@/blocks/idempotency/caches/redis-cache";

describeCacheContract({
  name: "noopCache",
  remembers: false,
  open: async () => ({ cache: noopCache, close: async () => {} }),
});

describe.skipIf(!redisUrl)("[REDIS_URL] RedisCache", () => {
  describeCacheContract({
    name: "RedisCache",
    remembers: true,
    async open() {
      const redis = await openTestRedis();
      return { cache: new RedisCache(redis, { prefix: `test:${process.pid}:` }), close: async () => void redis.disconnect() };
    },
  });

  it("ignores an entry that is not a completed record", async () => {
    const redis = await openTestRedis();
    const cache = new RedisCache(redis, { prefix: `test:${process.pid}:odd:` });
    const scope = { operation: "op", userId: "u", key: "k" };
    await cache.set(scope, { requestHash: "h", status: "PROCESSING" as "SUCCESS", response: null }, 60_000);
    expect(await cache.get(scope)).toBeUndefined();
    redis.disconnect();
  });
});
