// Runs one load job in its own process, so the load generator never shares an event loop with a server.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { LoadJob, LoadResult } from "./load-worker";

const WORKER = fileURLToPath(new URL("./load-worker.ts", import.meta.url));
const GRACE_MS = 60_000;

export function runLoad(job: LoadJob): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = fork(WORKER, [JSON.stringify(job)], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
    let result: LoadResult | undefined;
    const timer = setTimeout(() => child.kill("SIGKILL"), job.durationSeconds * 1000 + GRACE_MS);
    child.on("message", (message: { type?: string; result?: LoadResult }) => {
      if (message?.type === "result") result = message.result;
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      if (result) resolve(result);
      else reject(new Error(`load generator exited with code ${code} and no result (${job.url}, ${job.mode})`));
    });
  });
}
