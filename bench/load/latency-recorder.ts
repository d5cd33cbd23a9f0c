// Sub-millisecond latency percentiles: autocannon's own histogram keeps whole milliseconds only.

/** Samples kept at most (far above what one short run produces); later samples are dropped. */
const MAX_SAMPLES = 5_000_000;

export class LatencyRecorder {
  private samples = new Float64Array(1 << 16);
  private count = 0;

  record(ms: number): void {
    if (this.count === this.samples.length) {
      if (this.count >= MAX_SAMPLES) return;
      const grown = new Float64Array(Math.min(this.count * 2, MAX_SAMPLES));
      grown.set(this.samples);
      this.samples = grown;
    }
    this.samples[this.count++] = ms;
  }

  /** Nearest-rank percentile in milliseconds, e.g. `percentile(99)`. */
  percentile(p: number): number {
    if (this.count === 0) return Number.NaN;
    const sorted = this.samples.subarray(0, this.count).sort();
    const rank = Math.min(this.count - 1, Math.max(0, Math.ceil((p / 100) * this.count) - 1));
    return sorted[rank] as number;
  }
}
