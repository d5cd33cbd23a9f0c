// Where the rate limiter's and the error handler's servers spend their CPU, beside their peers':
// `npx tsx bench/profile-siblings.ts rate-limiter|error-handler [requests]` starts the scenario's servers under
// `node --cpu-prof` (the same bundle and specs as `npm run bench`), sends each the same requests, and prints
// each profile's top frames by self time (profiles in bench/results/profiles/<server>).
import { existsSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ServerSpec } from "./servers/spec";
import type { ServerWish } from "./support/server-set";

process.env.BENCH_CPU_PROF = "1";
const { settings } = await import("./config");
const { startServer, profileDir } = await import("./support/spawn-server");
const { runLoad, stopLoad } = await import("./load/run-load");
const { mainThreadProfile, summariseProfile } = await import("./support/cpu-profile");
const { deleteRunKeys, openRedis, runId } = await import("./support/services");
const { bundle } = await import("./support/bundle");

const scenario = process.argv[2];
const requests = Number(process.argv[3] ?? 30_000);
const TOP = Number(process.env.PROFILE_TOP ?? 15);

const WISHES: Record<string, ServerWish[]> = {
  "rate-limiter": [
    { framework: "express", variant: "bare", backend: "none" },
    { framework: "express", variant: "rate-limited", backend: "redis" },
    { framework: "express", variant: "rate-limiter-flexible", backend: "redis" },
    { framework: "fastify", variant: "bare", backend: "none" },
    { framework: "fastify", variant: "rate-limited", backend: "redis" },
    { framework: "fastify", variant: "fastify-rate-limit", backend: "redis" },
  ],
  "error-handler": [
    { framework: "hono", variant: "bare", backend: "none" },
    { framework: "hono", variant: "error-handler", backend: "none" },
    { framework: "hono", variant: "hono-problem-details", backend: "none" },
  ],
};

async function peerModule(): Promise<string | undefined> {
  const entry = process.env.BENCH_HONO_PROBLEM_DETAILS;
  if (!entry || !existsSync(entry)) return undefined;
  const out = fileURLToPath(new URL("./.build/hono-problem-details.mjs", import.meta.url));
  await bundle(entry, out);
  return out;
}

async function main(): Promise<void> {
  const wishes = WISHES[scenario ?? ""];
  if (!wishes)
    throw new Error(`Usage: profile-siblings.ts ${Object.keys(WISHES).join("|")} [requests]; got "${scenario ?? ""}".`);
  if (!Number.isSafeInteger(requests) || requests < 1)
    throw new Error(`requests must be a positive integer, got "${process.argv[3]}".`);
  const peer = scenario === "error-handler" ? await peerModule() : undefined;
  const redis = openRedis();
  try {
    for (const [index, wish] of wishes.entries()) {
      if (wish.variant === "hono-problem-details" && !peer) {
        console.log("hono-problem-details: skipped (set BENCH_HONO_PROBLEM_DETAILS to its src/index.ts)");
        continue;
      }
      const spec: ServerSpec = {
        ...wish,
        peerModule: peer,
        redisPrefix: `bench:${runId}:profile:${index}:`,
        databaseUrl: settings.databaseUrl,
        redisUrl: settings.redisUrl,
        poolSize: settings.poolSize,
      };
      const dir = profileDir(spec);
      rmSync(dir, { recursive: true, force: true });
      const server = await startServer(spec);
      try {
        await runLoad({
          url: `${server.url}/payments`,
          mode: "fresh",
          keyPrefix: `${runId}-p${index}`,
          replayKeys: 1,
          durationSeconds: 600,
          amount: requests,
          connections: settings.connections,
        });
      } finally {
        await server.stop();
      }
      const file = mainThreadProfile(dir);
      if (!file) throw new Error(`no profile written in ${dir}`);
      const { totalMs, functions } = summariseProfile(file, TOP);
      console.log(`\n${server.label} (${totalMs} ms sampled), top frames by self time:`);
      for (const spot of functions)
        console.log(`  ${String(spot.percent).padStart(5)}%  ${String(spot.selfMs).padStart(6)} ms  ${spot.name}`);
    }
  } finally {
    stopLoad();
    await deleteRunKeys(redis);
    redis.disconnect();
  }
}

await main();
