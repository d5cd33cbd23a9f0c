// Small statistics over alternating rounds: medians, and ratios taken round by round.

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** The median of per-round ratios: each pair ran back to back, so slow phases of the machine cancel out. */
export function pairedRatio(values: number[], baseline: number[]): number {
  const ratios = values.flatMap((value, round) => {
    const base = baseline[round];
    return base === undefined || base === 0 ? [] : [value / base];
  });
  return median(ratios);
}

export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
