// Which of MemoryStore's records and retry counters each user holds, oldest first: eviction takes from the biggest holder.

/** Ids grouped by the user who owns them, each group oldest first. */
export class Owners {
  private readonly byOwner = new Map<string, Set<string>>();

  /** Appends `id` to its owner's group, moved to the end if it was there already. */
  add(owner: string, id: string): void {
    const ids = this.byOwner.get(owner);
    if (ids === undefined) {
      this.byOwner.set(owner, new Set([id]));
      return;
    }
    ids.delete(id);
    ids.add(id);
  }

  /** `add` for an id its owner does not hold: nothing to move. */
  append(owner: string, id: string): void {
    const ids = this.byOwner.get(owner);
    if (ids === undefined) this.byOwner.set(owner, new Set([id]));
    else ids.add(id);
  }

  holds(owner: string): boolean {
    return this.byOwner.has(owner);
  }

  /** A copy: the caller may remove ids while it walks them. */
  of(owner: string): string[] {
    return [...(this.byOwner.get(owner) ?? [])];
  }

  remove(owner: string, id: string): void {
    const ids = this.byOwner.get(owner);
    if (ids?.delete(id) && ids.size === 0) this.byOwner.delete(owner);
  }

  /**
   * Up to `count` of the oldest ids that `evictable` accepts, all of the owner holding the most, and
   * never so many that it ends up holding fewer than the runner-up: the next call takes from whoever
   * is biggest then.
   */
  oldestOfBiggest(
    count: number,
    evictable: (id: string) => boolean,
    sizeOf: (owner: string, held: number) => number = (_, held) => held,
  ): { owner: string; ids: string[] } | undefined {
    let biggest: Set<string> | undefined;
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
    const ids: string[] = [];
    for (const id of biggest) {
      if (ids.length === take) break;
      if (evictable(id)) ids.push(id);
    }
    return ids.length > 0 ? { owner, ids } : undefined;
  }
}
