// Sends load jobs to long-lived generator processes, so load never shares an event loop with a server: one
// generator per server loaded at the same time (each runs one job at a time and answers it; replies carry no job id).
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { LoadJob, LoadResult } from "./load-worker";

const WORKER = fileURLToPath(new URL("./load-worker.ts", import.meta.url));
const GRACE_MS = 60_000;

type Reply = { type?: string; result?: LoadResult; error?: string };

/** One generator process; `run` must not be called again before its answer. */
export type LoadGenerator = {
  run(job: LoadJob): Promise<LoadResult>;
  /** Ends the running `untilStopped` job: no new request, its answer once those in flight are answered. */
  stop(): void;
  /** The process's id, or undefined before its first job. */
  pid(): number | undefined;
};

const generators: { child?: ChildProcess | undefined }[] = [];

function spawned(slot: { child?: ChildProcess | undefined }): ChildProcess {
  const { child } = slot;
  if (child && child.exitCode === null && child.signalCode === null) return child;
  slot.child = fork(WORKER, [], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return slot.child;
}

function send(child: ChildProcess, job: LoadJob): Promise<LoadResult> {
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

/** The first `count` generator processes (started on their first job), the same ones on every call. */
export function loadGenerators(count: number): LoadGenerator[] {
  while (generators.length < count) generators.push({});
  return generators.slice(0, count).map((slot) => ({
    run: (job) => send(spawned(slot), job),
    stop: () => {
      if (slot.child?.connected) slot.child.send({ type: "stop" });
    },
    pid: () => slot.child?.pid,
  }));
}

/** Runs one job on the first generator. */
export function runLoad(job: LoadJob): Promise<LoadResult> {
  return (loadGenerators(1)[0] as LoadGenerator).run(job);
}

/** Ends the generator processes (the run is over). */
export function stopLoad(): void {
  for (const slot of generators) slot.child?.disconnect();
  generators.length = 0;
}
