// Starts a fixture project's server on a free 127.0.0.1 port, waits until it answers, and stops it.
import { execa } from "execa";
import { freePort } from "../support/free-port";

export type RunningServer = { base: string; output(): string; stop(): Promise<void> };

/**
 * Runs `command` in the project with PORT set, and resolves once `GET <readyPath>` answers 200.
 *
 * @example
 * const server = await startServer(dir, "node", ["dist/server.js"], "/runs");
 */
export async function startServer(
  cwd: string,
  command: string,
  args: string[],
  readyPath: string,
  options: { timeoutMs?: number; env?: Record<string, string> } = {},
): Promise<RunningServer> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const port = await freePort();
  const child = execa(
    command,
    args.map((arg) => arg.replace("$PORT", String(port))),
    {
      cwd,
      reject: false,
      stdin: "ignore",
      // Its own process group, so stop() also ends what it spawns (npx -> next start -> next-server).
      detached: true,
      all: true,
      env: { ...options.env, PORT: String(port), NO_COLOR: "1", NEXT_TELEMETRY_DISABLED: "1" },
    },
  );
  let output = "";
  child.all?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const base = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.pid === undefined) return;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // The group is already gone.
    }
    await child;
  };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    const ready = await fetch(base + readyPath).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) return { base, output: () => output, stop };
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await stop();
  throw new Error(`The server did not answer ${readyPath} within ${timeoutMs} ms:\n${output.slice(-3000)}`);
}
