// No cache: every request reads the store (`add --cache none`). `add --cache redis` puts Redis in front of it.
import type { IdempotencyCache } from "../types";

/** No cache: the client is always `null`. */
export type CacheClient = null;

export function connectCache(): CacheClient {
  return null;
}

/** The same signature as the Redis version's (compose.ts passes the client), with no parameter to leave unused (typescript-eslint's recommended preset). */
export const openCache: (client: CacheClient) => {
  cache: IdempotencyCache | undefined;
  end(): Promise<void>;
} = () => ({
  cache: undefined,
  end: () => Promise.resolve(),
});
