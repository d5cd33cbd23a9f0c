// Sends load jobs to one long-lived generator process, so load never shares an event loop with a server.
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { LoadJob, LoadResult } from "./load-worker";

const WORKER = fileURLToPath(new URL("./load-worker.ts", import.meta.url));
const GRACE_MS = 60_000;

type Reply = { type?: string; result?: LoadResult; error?: string };

let worker: ChildProcess | undefined;

function loadWorker(): ChildProcess {
  if (!worker || worker.exitCode !== null || worker.signalCode !== null) {
    worker = fork(WORKER, [], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  }
  return worker;
}

export function runLoad(job: LoadJob): Promise<LoadResult> {
  const child = loadWorker();
  return new Promise((resolve, reject) => {
    const finish = (outcome: () => void) => {
      clearTimeout(timer);
      child.off("message", onMessage);
      child.off("exit", onExit);
      outcome();
    };
    const onMessage = (reply: Reply) => {
      if (reply?.type === "result" && reply.result) finish(() => resolve(reply.result as LoadResult));
      else if (reply?.type === "error")
        finish(() => reject(new Error(`load generator failed (${job.url}, ${job.mode}): ${reply.error}`)));
    };
    const onExit = (code: number | null) =>
      finish(() => reject(new Error(`load generator exited with code ${code} (${job.url}, ${job.mode})`)));
    const timer = setTimeout(
      () => {
        child.kill("SIGKILL");
        finish(() => reject(new Error(`load generator did not answer in time (${job.url}, ${job.mode})`)));
      },
      job.durationSeconds * 1000 + GRACE_MS,
    );
    child.on("message", onMessage);
    child.once("exit", onExit);
    child.send({ type: "job", job });
  });
}

/** Ends the generator process (the run is over). */
export function stopLoad(): void {
  worker?.disconnect();
  worker = undefined;
}
