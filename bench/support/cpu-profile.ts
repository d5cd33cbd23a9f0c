// Reads a V8 .cpuprofile and lists where the time went: self time per function and per package.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

type ProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};
type CpuProfile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };

export type HotSpot = { name: string; selfMs: number; percent: number };
export type ProfileSummary = { totalMs: number; functions: HotSpot[]; packages: HotSpot[] };

export function summariseProfile(path: string, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const totalUs = [...selfUs.values()].reduce((sum, us) => sum + us, 0);
  const functions = new Map<string, number>();
  const packages = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    const where = shortUrl(frame.url);
    const name = `${frame.functionName || "(anonymous)"} ${where}${frame.url ? `:${frame.lineNumber + 1}` : ""}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
    packages.set(
      packageOf(frame.url, frame.functionName),
      (packages.get(packageOf(frame.url, frame.functionName)) ?? 0) + us,
    );
  }
  const ranked = (map: Map<string, number>) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, selfMs: Math.round(us / 1000), percent: Math.round((1000 * us) / totalUs) / 10 }));
  return { totalMs: Math.round(totalUs / 1000), functions: ranked(functions), packages: ranked(packages) };
}

/** The main thread's profile among one process's profiles (`CPU.<date>.<time>.<pid>.<thread>.<seq>`): thread 0. */
export function mainThreadProfile(dir: string): string | undefined {
  const name = readdirSync(dir).find((file) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(file));
  return name && join(dir, name);
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf("node_modules/");
  if (modules >= 0) return url.slice(modules + "node_modules/".length);
  const path = url.replace(/^file:\/\//, "");
  return path.startsWith(ROOT) ? path.slice(ROOT.length) : path;
}

/** `(program)`, `(garbage collector)`, node internals, a package name, or a folder of this repo. */
function packageOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith("(") ? functionName : "(native)";
  if (url.startsWith("node:")) return "node internals";
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (match) return match[1] as string;
  const path = shortUrl(url);
  return path.split("/").slice(0, 2).join("/");
}
