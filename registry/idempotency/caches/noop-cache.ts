// The default cache: remembers nothing, so every look-up goes to the store.
import type { IdempotencyCache } from "../types";

export const noopCache: IdempotencyCache = {
  async get() {
    return undefined;
  },
  async set() {},
};
