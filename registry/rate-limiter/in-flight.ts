// Store calls still waiting, per caller, in this process: the bound that keeps one caller's burst from piling up store calls.

/** A key's store calls (in cost units) still waiting. */
export type InFlightSlot = { pending: number };

/** Callers whose slot is kept between their requests before the idle ones are dropped. */
const MAX_IDLE_SLOTS = 10_000;

/**
 * A key's slot stays when its calls are answered: the next request of that caller finds it (a map
 * entry added and deleted per request cost more than the rest of the bookkeeping). Slots with
 * nothing waiting are dropped together once there are more than MAX_IDLE_SLOTS.
 */
export class InFlightSlots {
  private readonly slots = new Map<string, InFlightSlot>();
  private pruneAt = MAX_IDLE_SLOTS;

  /**
   * Takes `cost` units in `key`'s slot, one lookup per call: the slot, to hand back to `release`
   * when the store answers, or undefined when more than `max` units would then be waiting.
   */
  take(key: string, cost: number, max: number): InFlightSlot | undefined {
    const slot = this.slots.get(key);
    if (slot !== undefined) {
      if (slot.pending + cost > max) return undefined;
      slot.pending += cost;
      return slot;
    }
    if (cost > max) return undefined;
    const added = { pending: cost };
    this.add(key, added);
    return added;
  }

  private add(key: string, slot: InFlightSlot): void {
    if (this.slots.size >= this.pruneAt) {
      for (const [held, { pending }] of this.slots) if (pending <= 0) this.slots.delete(held);
      // As many callers waiting at once: the next walk waits until there are twice as many slots.
      this.pruneAt = Math.max(MAX_IDLE_SLOTS, this.slots.size * 2);
    }
    this.slots.set(key, slot);
  }
}
