// The shared flow's profile: `npx tsx bench/profile-execute.ts [calls]` bundles bench/core/execute-loop.ts, runs it
// under `node --cpu-prof` for fresh keys and for replays, and prints each profile's top frames (self time).
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { bundle } from "./support/bundle";
import { mainThreadProfile, summariseProfile } from "./support/cpu-profile";

const SOURCE = fileURLToPath(new URL("./core/execute-loop.ts", import.meta.url));
const BUNDLE = fileURLToPath(new URL("./.build/execute-loop.mjs", import.meta.url));
const PROFILES = fileURLToPath(new URL("./results/profiles/execute", import.meta.url));
const calls = process.argv[2] ?? "200000";

async function main(): Promise<void> {
  await bundle(SOURCE, BUNDLE);
  for (const mode of ["fresh", "replay"]) {
    const dir = `${PROFILES}/${mode}`;
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const out = execFileSync(process.execPath, ["--cpu-prof", `--cpu-prof-dir=${dir}`, BUNDLE, mode, calls], {
      encoding: "utf8",
    });
    const file = mainThreadProfile(dir);
    if (!file) throw new Error(`no profile written in ${dir}`);
    const { totalMs, functions } = summariseProfile(file, 15);
    console.log(`\n${out.trim()} (${totalMs} ms sampled), top frames by self time:`);
    for (const spot of functions)
      console.log(`  ${String(spot.percent).padStart(5)}%  ${String(spot.selfMs).padStart(6)} ms  ${spot.name}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
