// No cache: every request reads the store (`add --cache none`). `add --cache redis` puts Redis in front of it.
import type { IdempotencyCache } from "../types";

/** No cache: the client is always `null`. */
export type CacheClient = null;

export function connectCache(): CacheClient {
  return null;
}

export function openCache(_client: CacheClient): { cache: IdempotencyCache | undefined; end(): Promise<void> } {
  return { cache: undefined, end: () => Promise.resolve() };
}
