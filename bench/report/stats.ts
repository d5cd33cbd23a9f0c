// Small statistics over alternating rounds: medians, and ratios taken round by round.

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
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

/** The median of per-round differences (`value - baseline`), e.g. CPU µs a route adds to the bare one measured in the same round. */
export function pairedDifference(values: number[], baseline: number[]): number {
  const differences = values.flatMap((value, i) =>
    baseline[i] === undefined ? [] : [value - (baseline[i] as number)],
  );
  return median(differences);
}

/** A CPU difference as the reports write it: `+12.5 µs`, `-3 µs`. */
export function signedMicros(value: number): string {
  return `${value > 0 ? "+" : ""}${value} µs`;
}

/** The `q` quantile (0 to 1) of `values`, interpolated between the two nearest ranks. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const below = sorted[Math.floor(at)] as number;
  const above = sorted[Math.ceil(at)] as number;
  return below + (above - below) * (at - Math.floor(at));
}
