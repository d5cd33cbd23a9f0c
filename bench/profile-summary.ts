// Prints where a profiled process spent its time: `npx tsx bench/profile-summary.ts <profile folder or file>...`.
import { statSync } from "node:fs";
import { mainThreadProfile, summariseProfile } from "./support/cpu-profile";

const TOP = Number(process.env.PROFILE_TOP ?? 20);

for (const target of process.argv.slice(2)) {
  const file = statSync(target).isDirectory() ? mainThreadProfile(target) : target;
  if (!file) {
    console.log(`${target}: no .cpuprofile inside`);
    continue;
  }
  const { totalMs, functions, packages } = summariseProfile(file, TOP);
  console.log(`\n${target} (${totalMs} ms sampled)\n  by package:`);
  for (const spot of packages) console.log(`    ${String(spot.percent).padStart(5)}%  ${spot.name}`);
  console.log("  by function (self time):");
  for (const spot of functions) console.log(`    ${String(spot.percent).padStart(5)}%  ${spot.name}`);
}
