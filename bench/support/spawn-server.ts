// Starts a benchmark server in its own process and stops it; the parent only learns its port.
import { fork, type ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { settings } from "../config";
import { specLabel, type ServerSpec } from "../servers/spec";
import { bundle } from "./bundle";

const SERVER_SOURCE = fileURLToPath(new URL("../servers/server-main.ts", import.meta.url));
const SERVER_MAIN = fileURLToPath(new URL("../.build/server-main.mjs", import.meta.url));
export const PROFILE_DIR = fileURLToPath(new URL("../results/profiles", import.meta.url));
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;

export type RunningServer = { spec: ServerSpec; label: string; url: string; pid: number; stop(): Promise<void> };

export async function startServer(spec: ServerSpec): Promise<RunningServer> {
  // One JavaScript bundle, as a production build would run (see bundle.ts).
  await bundle(SERVER_SOURCE, SERVER_MAIN);
  const execArgv: string[] = [];
  if (settings.cpuProfile) {
    // One folder per server: a worker thread would write a profile of its own beside the main thread's.
    const dir = profileDir(spec);
    mkdirSync(dir, { recursive: true });
    execArgv.push("--cpu-prof", `--cpu-prof-dir=${dir}`);
  }
  const child = fork(SERVER_MAIN, [JSON.stringify(spec)], { execArgv, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const port = await readyPort(child);
  return {
    spec,
    label: specLabel(spec),
    url: `http://127.0.0.1:${port}`,
    pid: child.pid ?? -1,
    stop: () => stopChild(child),
  };
}

function readyPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error("benchmark server did not start in time"));
    }, START_TIMEOUT_MS);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`benchmark server exited with code ${code} before listening`));
    });
    child.on("message", (message: { type?: string; port?: number }) => {
      if (message?.type !== "ready" || typeof message.port !== "number") return;
      clearTimeout(timer);
      resolve(message.port);
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.send({ type: "stop" });
  const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

export function profileDir(spec: ServerSpec): string {
  return join(
    PROFILE_DIR,
    specLabel(spec)
      .replace(/[^a-z0-9]+/gi, "-")
      .replace(/^-|-$/g, ""),
  );
}
