// Runs the cache contract against the no-op cache and RedisCache on REDIS_URL.
import { describe } from "vitest";
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
      return {
        cache: new RedisCache(redis, { prefix: `test:${process.pid}:` }),
        close: async () => void redis.disconnect(),
      };
    },
  });
});
