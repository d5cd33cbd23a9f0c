// Scenario 11: the error-handler block on Hono: the server CPU of answering a problem through our adapter
// (`problemDetails().onError`) and through hono-problem-details, against the bare route that throws nothing.
// Bare, ours and the peer are loaded at once in each round (bench/support/measure-cpu.ts), the slowest answering
// about BENCH_CPU_REQUESTS x PEER_TURN_FACTOR requests, CPU from /proc to the nanosecond; the verdict is the median
// of the per-round differences ours - peer (the same window), with its spread.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type pg from "pg";
import { settings } from "../config";
import { bundle } from "../support/bundle";
import { comparePeer, describeComparison, PEER_TURN_FACTOR, type PeerComparison } from "../support/peer-comparison";
import type { ServerWish } from "../support/server-set";
import { cpuRows, type CpuRow } from "./server-cpu";

/** hono-problem-details is not on the npm registry: point this at its source to add its row. */
export const PEER_ENV = "BENCH_HONO_PROBLEM_DETAILS";
export const PEER_SKIPPED = `skipped: not on the npm registry; set ${PEER_ENV}=<path to its src/index.ts>`;
const PEER_BUNDLE = fileURLToPath(new URL("../.build/hono-problem-details.mjs", import.meta.url));

/** `peer`: "measured", or why its row is missing; `comparison`: ours against it, when measured. */
export type ErrorHandlerResult = { cpu: CpuRow[]; peer: string; comparison?: PeerComparison | undefined };

/** Its source as one JavaScript file beside the server bundle (hono stays external: the same copy as ours). */
async function peerBundle(): Promise<{ module: string } | { skipped: string }> {
  const entry = process.env[PEER_ENV];
  if (!entry) return { skipped: PEER_SKIPPED };
  if (!existsSync(entry)) return { skipped: `skipped: ${PEER_ENV}=${entry} does not exist` };
  await bundle(entry, PEER_BUNDLE);
  return { module: PEER_BUNDLE };
}

export async function errorHandler(pool: pg.Pool): Promise<ErrorHandlerResult> {
  const peer = await peerBundle();
  const routes: ServerWish[] = [
    { framework: "hono", variant: "bare", backend: "none" },
    { framework: "hono", variant: "error-handler", backend: "none" },
  ];
  if ("module" in peer)
    routes.push({ framework: "hono", variant: "hono-problem-details", backend: "none", peerModule: peer.module });
  console.log("server CPU per request, Hono (a 402 problem; the bare route answers 201):");
  const cpu = await cpuRows(pool, "eh_cpu", "hono", routes, ["fresh"], {
    requests: settings.cpuRequests * PEER_TURN_FACTOR,
  });
  if ("skipped" in peer) {
    console.log(`  hono hono-problem-details: ${peer.skipped}`);
    return { cpu, peer: peer.skipped };
  }
  const ours = cpu.find((row) => row.route.variant === "error-handler");
  const theirs = cpu.find((row) => row.route.variant === "hono-problem-details");
  const comparison = ours && theirs ? comparePeer(ours, theirs) : undefined;
  if (comparison) console.log(`  ${describeComparison(comparison)}`);
  return { cpu, peer: "measured", comparison };
}
