// Callers the store refused, remembered until they may pass again: a refused caller costs no store round trip meanwhile.

/** `banned`: refused with 403 whatever the request, until `until`. */
type Block = { until: number; cost: number; limit: number; banned: boolean };

/**
 * A refusal says exactly when the next request of that cost fits (`retryAfterMs`); until then the
 * store would only refuse again. Bounded: past `maxKeys` the oldest block is forgotten, which only
 * sends that caller to the store once more.
 */
export class BlockCache {
  private readonly blocks = new Map<string, Block>();
  private readonly maxKeys: number;
  private readonly now: () => number;

  constructor(maxKeys = 10_000, now: () => number = Date.now) {
    this.maxKeys = maxKeys;
    this.now = now;
  }

  /** Keys held: 0 lets a caller skip the lookup. */
  get size(): number {
    return this.blocks.size;
  }

  /** How long `key` stays refused for a request of this cost under this limit, and whether it is banned; undefined when it may go to the store. */
  blocked(key: string, cost: number, limit: number): { ms: number; banned: boolean } | undefined {
    const block = this.blocks.get(key);
    if (!block) return undefined;
    const ms = block.until - this.now();
    if (ms <= 0) {
      this.blocks.delete(key);
      return undefined;
    }
    // A cheaper request, or one under another limit, may fit sooner: let the store decide it.
    if (!block.banned && (cost < block.cost || limit !== block.limit)) return undefined;
    return { ms, banned: block.banned };
  }

  block(key: string, ms: number, cost: number, limit: number, banned = false): void {
    if (ms <= 0) return;
    this.blocks.delete(key);
    this.blocks.set(key, { until: this.now() + ms, cost, limit, banned });
    if (this.blocks.size > this.maxKeys) this.blocks.delete(this.blocks.keys().next().value as string);
  }
}
