// The in-process comparisons (bench/limiter-cpu.ts, bench/problem-cpu.ts): their arguments, their alternated rounds, their report.
import { median, pairedRatio, round } from "../report/stats";

/** One variant's CPU µs per call, one figure per round. */
export type RoundsRow = { name: string; rounds: number[] };

/** Refuses a `calls` or `rounds` argument that is not a positive integer, naming it. */
export function checkCounts(counts: Record<string, string>): void {
  for (const [name, value] of Object.entries(counts))
    if (!/^[1-9]\d*$/.test(value)) throw new Error(`${name} must be a positive integer, got "${value}".`);
}

/**
 * Each variant warmed up once, then `rounds` rounds of `calls` calls in alternation (A B C, then C B A, ...):
 * a drift of the machine falls on every variant alike.
 */
export async function alternateRounds<V extends { name: string }>(
  list: V[],
  run: (variant: V, calls: number) => Promise<number>,
  counts: { warmup: number; calls: number; rounds: number },
): Promise<RoundsRow[]> {
  for (const variant of list) await run(variant, counts.warmup);
  const figures = new Map<V, number[]>(list.map((v) => [v, []]));
  for (let r = 0; r < counts.rounds; r++) {
    for (const variant of r % 2 === 0 ? list : [...list].reverse())
      figures.get(variant)?.push(await run(variant, counts.calls));
  }
  return list.map((v) => ({ name: v.name, rounds: figures.get(v) ?? [] }));
}

/** One line per variant: its rounds, their median, and its ratio to `peer` (the median of per-round ratios). */
export function printRounds(
  rows: RoundsRow[],
  peer: RoundsRow | undefined,
  peerLabel: string,
  nameWidth: number,
): void {
  for (const row of rows) {
    const ratio = peer && row !== peer ? `  ${round(pairedRatio(row.rounds, peer.rounds))}x ${peerLabel}` : "";
    const figures = row.rounds.map((us) => round(us, 2)).join(" / ");
    console.log(
      `${row.name.padEnd(nameWidth)} ${figures.padEnd(44)} median ${round(median(row.rounds), 2)} µs${ratio}`,
    );
  }
}
