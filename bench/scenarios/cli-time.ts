// Scenario 10: wall time of `blocks add idempotency --no-install` into fresh copies of each fixture project.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { median, round } from "../report/stats";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CLI = join(ROOT, "dist/cli/index.js");
const FIXTURES = join(ROOT, "test/fixtures");
const RUNS = 3;
const COMMAND_TIMEOUT_MS = 60_000;

export type CliTiming =
  { fixture: string; medianMs: number; runsMs: number[]; files: number } | { fixture: string; error: string };
export type CliResult = {
  command: string;
  available: boolean;
  reason?: string;
  timings: CliTiming[];
  profile?: string;
};

function blocks(args: string[], cwd: string, extraNodeArgs: string[] = []) {
  return spawnSync(process.execPath, [...extraNodeArgs, CLI, ...args, "--cwd", cwd], {
    encoding: "utf8",
    timeout: COMMAND_TIMEOUT_MS,
  });
}

/** One timed `add` into a fresh copy of `fixture` (after an untimed `init --yes`). */
function addOnce(fixture: string, nodeArgs: string[] = []): { ms: number; files: number } {
  const project = mkdtempSync(join(tmpdir(), `blocks-bench-${fixture}-`));
  try {
    cpSync(join(FIXTURES, fixture), project, { recursive: true });
    const init = blocks(["init", "--yes", "--silent"], project);
    if (init.status !== 0) throw new Error(`init failed: ${init.stderr || init.stdout}`);
    const started = performance.now();
    const add = blocks(["add", "idempotency", "--no-install", "--yes", "--silent"], project, nodeArgs);
    const ms = performance.now() - started;
    if (add.status !== 0) throw new Error(`add failed (${add.status}): ${add.stderr || add.stdout}`);
    return { ms, files: readdirSync(project, { recursive: true }).length };
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
}

export function cliTime(): CliResult {
  const command = "blocks add idempotency --no-install --yes";
  // Built here, so the row times this checkout's CLI, never a missing or stale dist/.
  const build = spawnSync("npm", ["run", "build"], { cwd: ROOT, encoding: "utf8" });
  if (build.status !== 0 || !existsSync(CLI))
    return {
      command,
      available: false,
      reason: `\`npm run build\` failed: ${build.stderr || build.stdout}`,
      timings: [],
    };
  const fixtures = readdirSync(FIXTURES, { withFileTypes: true }).filter(
    (entry) => entry.isDirectory() && existsSync(join(FIXTURES, entry.name, "package.json")),
  );
  const timings: CliTiming[] = fixtures.map(({ name }) => {
    try {
      const runs = Array.from({ length: RUNS }, () => addOnce(name));
      const runsMs = runs.map((run) => round(run.ms, 0));
      console.log(`  ${name.padEnd(20)} median ${median(runsMs)} ms  (${runsMs.join(", ")})`);
      return { fixture: name, medianMs: median(runsMs), runsMs, files: runs[0]?.files ?? 0 };
    } catch (err) {
      console.log(`  ${name.padEnd(20)} FAILED: ${String(err)}`);
      return { fixture: name, error: String(err) };
    }
  });
  return { command, available: true, timings };
}

/** Runs one `add` under --cpu-prof and returns the profile's path (kept under bench/results/profiles). */
export function profileCliAdd(fixture: string, profileDir: string): string {
  addOnce(fixture, ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, "--cpu-prof-name=cli-add.cpuprofile"]);
  return join(profileDir, "cli-add.cpuprofile");
}
