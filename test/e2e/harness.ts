// Runs the built CLI the way CI and agents do (no terminal) on a throwaway copy of a fixture project.
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { execa } from "execa";

export const REPO = path.resolve(import.meta.dirname, "../..");
export const CLI = path.join(REPO, "dist/cli/index.js");

/** npm answers from its cache when it can: the fixtures install the same few packages every run. */
const NPM_ENV = {
  npm_config_prefer_offline: "true",
  npm_config_audit: "false",
  npm_config_fund: "false",
  npm_config_update_notifier: "false",
};
/** Plain output to assert on, whatever colour settings the outer vitest passes down. */
const PLAIN = { NO_COLOR: "1", FORCE_COLOR: undefined };

/**
 * A fresh copy of test/fixtures/<name> in the temp folder; `remove()` deletes it unless KEEP_E2E is set.
 *
 * @example
 * const project = copyFixture("express-nodenext");
 */
export function copyFixture(name: string): { dir: string; remove(): void } {
  const dir = path.join(mkdtempSync(path.join(tmpdir(), "blocks-e2e-")), name);
  cpSync(path.join(REPO, "test/fixtures", name), dir, { recursive: true });
  return {
    dir,
    remove: () => (process.env.KEEP_E2E ? undefined : rmSync(path.dirname(dir), { recursive: true, force: true })),
  };
}

/**
 * Runs `blocks <args>` with stdin closed and no TTY; a prompt would time out instead of hanging the suite.
 *
 * @example
 * const { exitCode, stdout } = await blocks(dir, ["add", "idempotency", "--yes"]);
 */
export function blocks(cwd: string, args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  return run("node", [CLI, ...args], cwd, env);
}

/** Runs a tool installed in the fixture (tsc, vitest) through npx, without prompting to download. */
export function inProject(
  cwd: string,
  command: string,
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<Run> {
  return run("npx", ["--no-install", command, ...args], cwd, { CI: "true", ...env });
}

/** Runs any command in the fixture (npm, node) with the suite's npm settings. */
export function command(
  cwd: string,
  file: string,
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<Run> {
  return run(file, args, cwd, env);
}

export type Run = { exitCode: number; stdout: string; stderr: string };

async function run(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string | undefined>,
): Promise<Run> {
  const result = await execa(command, args, {
    cwd,
    reject: false,
    stdin: "ignore",
    timeout: 180_000,
    env: { ...NPM_ENV, ...PLAIN, ...env },
  });
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}
