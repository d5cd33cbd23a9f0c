// Ours against a peer library on one framework, from one group's rounds. The verdict is the median of the
// per-round differences between the two servers' CPU per request: each pair ran in the same window (or, for
// Redis-bound groups, back to back), and the bare
// route's own noise, which enters each one's "added" figure separately, never enters it.
import { median, quantile, round } from "../report/stats";
import type { CpuRow } from "../scenarios/server-cpu";

/** A peer group's rounds are this many times BENCH_CPU_REQUESTS long: longer rounds average out what one catches of the host. */
export const PEER_TURN_FACTOR = 2;

export type PeerComparison = {
  framework: string;
  ours: string;
  peer: string;
  /** Each one's CPU per request over the bare route's (median of per-round differences). */
  oursAddedUs: number;
  peerAddedUs: number;
  /** `oursAddedUs / peerAddedUs`. */
  ratio: number;
  /** Per round, ours minus the peer (µs per request): the median, the quartiles and the extremes. */
  differenceUs: number;
  quartilesUs: [number, number];
  rangeUs: [number, number];
  rounds: number;
  requestsPerRound: number;
};

export function comparePeer(ours: CpuRow, peer: CpuRow): PeerComparison {
  const differences = ours.roundsUs.flatMap((us, i) =>
    peer.roundsUs[i] === undefined ? [] : [us - (peer.roundsUs[i] as number)],
  );
  const oursAddedUs = ours.addedUs ?? Number.NaN;
  const peerAddedUs = peer.addedUs ?? Number.NaN;
  return {
    framework: ours.framework,
    ours: ours.label,
    peer: peer.label,
    oursAddedUs,
    peerAddedUs,
    ratio: round(oursAddedUs / peerAddedUs),
    differenceUs: round(median(differences), 1),
    quartilesUs: [round(quantile(differences, 0.25), 1), round(quantile(differences, 0.75), 1)],
    rangeUs: [round(Math.min(...differences), 1), round(Math.max(...differences), 1)],
    rounds: differences.length,
    requestsPerRound: ours.requestsPerRound,
  };
}

/** One line for the console and the targets: each one's added CPU, and the paired difference with its spread. */
export function describeComparison(c: PeerComparison): string {
  const signed = (us: number) => `${us > 0 ? "+" : ""}${us}`;
  return (
    `ours ${signed(c.oursAddedUs)} µs, ${c.peer.replace(`${c.framework} `, "")} ${signed(c.peerAddedUs)} µs over bare (${c.ratio}x); ` +
    `ours - peer per round: median ${signed(c.differenceUs)} µs, quartiles ${c.quartilesUs.join(" .. ")}, ` +
    `range ${c.rangeUs.join(" .. ")} (${c.rounds} rounds of ${c.requestsPerRound} requests)`
  );
}
