// Refusals counted per caller in this process, and the moment one too many bans the caller.
import { gcraStep, rateOf } from "./gcra";
import type { GcraRate, RateLimitPolicy } from "./types";

/** Counts kept at most: past it the oldest count goes first (that caller starts counting again). */
const MAX_COUNTS = 10_000;

/**
 * Bans are per process, counted in its memory: a refusal of this process (from the store, the
 * block cache or the in-flight bound) costs no store round trip, and a ban then costs none either.
 * The count is GCRA too: `refusals.limit` refusals per `refusals.windowMs`, one more is a ban.
 */
export class RefusalCounts {
  private readonly counts = new Map<string, number>();
  private readonly rate: GcraRate;
  private readonly prefix: string;

  constructor(refusals: RateLimitPolicy) {
    this.rate = rateOf(refusals);
    // "!" cannot occur in a policy name: the refusals never share a key with any policy's requests.
    this.prefix = `${refusals.name}!refusals:`;
  }

  /** Counts one refusal of `key`: true when it is one too many, and the caller is banned from now. */
  banned(key: string): boolean {
    const countKey = this.prefix + key;
    const now = Date.now() * 1000;
    const answer = gcraStep(this.counts.get(countKey), now, this.rate);
    this.counts.delete(countKey);
    if (answer.allowed) {
      if (answer.tat > now) this.counts.set(countKey, answer.tat);
      // Bounded like the memory store: the oldest count goes first.
      if (this.counts.size > MAX_COUNTS) this.counts.delete(this.counts.keys().next().value as string);
      return false;
    }
    // A fresh count after the ban: its end is a new start, not an instant second ban.
    return true;
  }
}
