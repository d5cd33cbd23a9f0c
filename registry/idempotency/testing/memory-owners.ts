// MemoryStore's records and retry counters, grouped by the user who holds them, oldest first: eviction takes from the biggest holder.

/**
 * Values by id, in one group per owner, each group in the order its ids were written. One Map per
 * owner rather than a Map of every id beside a Set of each owner's ids: a write, a delete and an
 * eviction touch one hash table, not two, and a kept record costs one table entry, not two.
 */
export class Owners<V> {
  private readonly byOwner = new Map<string, Map<string, V>>();
  /** Ids held, over every owner. */
  size = 0;

  get(owner: string, id: string): V | undefined {
    return this.byOwner.get(owner)?.get(id);
  }

  /** Writes `value` last in its owner's group: an id held already moves to the end. */
  set(owner: string, id: string, value: V): void {
    const ids = this.byOwner.get(owner);
    if (ids === undefined) {
      this.byOwner.set(owner, new Map([[id, value]]));
      this.size++;
      return;
    }
    if (ids.delete(id)) this.size--;
    ids.set(id, value);
    this.size++;
  }

  /** `set` for an id its owner does not hold: nothing to move. */
  append(owner: string, id: string, value: V): void {
    const ids = this.byOwner.get(owner);
    if (ids === undefined) this.byOwner.set(owner, new Map([[id, value]]));
    else ids.set(id, value);
    this.size++;
  }

  /** Removes `id`, and its owner with its last id. */
  delete(owner: string, id: string): void {
    const ids = this.byOwner.get(owner);
    if (!ids?.delete(id)) return;
    this.size--;
    if (ids.size === 0) this.byOwner.delete(owner);
  }

  holds(owner: string): boolean {
    return this.byOwner.has(owner);
  }

  /** One owner's ids and values, oldest first; deleting while walking them is safe (a Map's iterator allows it). */
  of(owner: string): Iterable<[string, V]> {
    return this.byOwner.get(owner) ?? [];
  }

  /** Every owner's ids and values, each owner's oldest first; deleting while walking them is safe. */
  *all(): Generator<[owner: string, id: string, value: V]> {
    for (const [owner, ids] of this.byOwner) for (const [id, value] of ids) yield [owner, id, value];
  }

  /**
   * Up to `count` of the oldest entries that `evictable` accepts, all of the owner holding the most, and
   * never so many that it ends up holding fewer than the runner-up: the next call takes from whoever
   * is biggest then.
   */
  oldestOfBiggest(
    count: number,
    evictable: (value: V) => boolean,
    sizeOf: (owner: string, held: number) => number = (_, held) => held,
  ): { owner: string; entries: Array<[id: string, value: V]> } | undefined {
    let biggest: Map<string, V> | undefined;
    let owner = "";
    let biggestSize = 0;
    let runnerUp = 0;
    for (const [candidate, ids] of this.byOwner) {
      const size = sizeOf(candidate, ids.size);
      if (size > biggestSize) {
        runnerUp = biggestSize;
        [biggest, owner, biggestSize] = [ids, candidate, size];
      } else runnerUp = Math.max(runnerUp, size);
    }
    if (!biggest) return undefined;
    const take = Math.min(count, Math.max(1, biggestSize - runnerUp));
    const entries: Array<[string, V]> = [];
    for (const entry of biggest) {
      if (entries.length === take) break;
      if (evictable(entry[1])) entries.push(entry);
    }
    return entries.length > 0 ? { owner, entries } : undefined;
  }
}
