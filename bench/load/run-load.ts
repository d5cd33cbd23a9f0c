// Sends load jobs to one long-lived generator process, so load never shares an event loop with a server. Jobs carry
// an id its answers repeat, so several can run at once (every server of a CPU group is loaded at the same time).
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { LoadJob, LoadResult } from "./load-worker";

const WORKER = fileURLToPath(new URL("./load-worker.ts", import.meta.url));
const GRACE_MS = 60_000;

type Reply = { type?: string; id?: number; result?: LoadResult; error?: string };
let lastId = 0;

let worker: ChildProcess | undefined;

function loadWorker(): ChildProcess {
  if (!worker || worker.exitCode !== null || worker.signalCode !== null) {
    worker = fork(WORKER, [], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  }
  return worker;
}

function send(child: ChildProcess, job: LoadJob): Promise<LoadResult> {
  const id = ++lastId;
  return new Promise((resolve, reject) => {
    const finish = (outcome: () => void) => {
      clearTimeout(timer);
      child.off("message", onMessage);
      child.off("exit", onExit);
      outcome();
    };
    const onMessage = (reply: Reply) => {
      if (reply?.id !== id) return;
      if (reply.type === "result" && reply.result) finish(() => resolve(reply.result as LoadResult));
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
    child.send({ type: "job", id, job });
  });
}

/** Runs one job; jobs run side by side when started before the last is answered. */
export function runLoad(job: LoadJob): Promise<LoadResult> {
  return send(loadWorker(), job);
}

/** Ends every running `untilStopped` job: no new request; each answers once its requests in flight are answered. */
export function stopLoadJobs(): void {
  if (worker?.connected) worker.send({ type: "stop" });
}

/** The generator's process id (undefined before its first job). */
export function loadPid(): number | undefined {
  return worker?.pid;
}

/** Ends the generator process (the run is over). */
export function stopLoad(): void {
  worker?.disconnect();
  worker = undefined;
}
