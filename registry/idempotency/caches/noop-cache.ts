// The default cache: remembers nothing, so every look-up goes to the store.
import type { IdempotencyCache } from "../types";

export const noopCache: IdempotencyCache = {
  get: () => Promise.resolve(undefined),
  set: () => Promise.resolve(),
};
